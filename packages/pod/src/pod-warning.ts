import type { SkillsErrorCode } from "@insomnia/skills";

/** Machine-readable reason of a {@link PodWarning}. */
export type PodWarningCode =
  | SkillsErrorCode
  | "SKILLS_OVER_BUDGET"
  | "AGENTS_MD_TRUNCATED"
  | "AGENTS_MD_NOT_UTF8"
  | "AGENTS_MD_OUTSIDE_SCOPE"
  | "AGENTS_MD_UNREADABLE"
  | "SOURCES_CHANGED"
  | "TOOLS_CHANGED"
  | "SEGMENT_TAIL_RECOVERED"
  | "SEGMENT_LOCK_STALE"
  /** A compaction's summary would not bring the conversation under the threshold: not applied. */
  | "COMPACTION_INEFFECTIVE"
  /** A compaction's summary call failed or gave no summary: not applied. */
  | "COMPACTION_FAILED";

/** Something a pod noticed, handled, and kept going after. */
export interface PodWarning {
  readonly code: PodWarningCode;
  readonly message: string;
  /** The file the warning is about, when there is one. */
  readonly file?: string;
  /** 1-based line in `file`, when known (a broken SKILL.md). */
  readonly line?: number;
  /** 1-based column in `file`, when known. */
  readonly column?: number;
}

/** Receives a pod's warnings; the pod itself never prints. */
export interface Notifier {
  warn(warning: PodWarning): void;
}

/** The default notifier: drops every warning (a library never prints). */
export const silentNotifier: Notifier = Object.freeze({ warn(): void {} });

/** A notifier that keeps every warning it receives, in order. */
export interface CollectingNotifier extends Notifier {
  readonly warnings: readonly PodWarning[];
}

/** Creates a notifier that collects warnings into its `warnings` array. */
export function collectWarnings(): CollectingNotifier {
  const warnings: PodWarning[] = [];
  return { warnings, warn: (warning) => void warnings.push(warning) };
}
