import { realpathSync } from "node:fs";

/**
 * A root whose real path was resolved once by {@link resolveRoot}, so that many files can be
 * read below it without resolving it again for each.
 */
export interface ResolvedRoot {
  /** The root as it was given. */
  readonly path: string;
  /** Its real path when it was resolved: every file read below it is judged against this. */
  readonly real: string;
}

/** What {@link resolveRoot} gives: the resolved root, or why it did not resolve. */
export type ResolveRootResult =
  | { readonly ok: true; readonly value: ResolvedRoot }
  | {
      readonly ok: false;
      readonly reason: "root-unresolved";
      readonly root: string;
      readonly errno?: string;
      readonly cause: unknown;
    };

// Only roots resolved here skip the resolve: an object built by hand is resolved again.
const issued = new WeakSet<ResolvedRoot>();

/** Resolves `root` to its real path once, for the `root` option of `readTextInsideRoot`. Never throws. */
export function resolveRoot(root: string): ResolveRootResult {
  let real: string;
  try {
    real = realpathSync.native(root);
  } catch (cause) {
    const code = (cause as { code?: unknown } | null)?.code;
    return { ok: false, reason: "root-unresolved", root, ...(typeof code === "string" ? { errno: code } : {}), cause };
  }
  const value: ResolvedRoot = Object.freeze({ path: root, real });
  issued.add(value);
  return { ok: true, value };
}

/** The real path of a root given as a path or as a {@link ResolvedRoot}; only a hand-built one is resolved again. */
export function realRootOf(root: string | ResolvedRoot): ResolveRootResult {
  if (typeof root === "string") return resolveRoot(root);
  return issued.has(root) ? { ok: true, value: root } : resolveRoot(root.path);
}
