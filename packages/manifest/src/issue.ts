import { ManifestError } from "./manifest-error.ts";
import type { ManifestErrorCode } from "./manifest-error.ts";
import type { LineLocator } from "@insomnia/safe-yaml";
import { lineLocator } from "@insomnia/safe-yaml";

/** A problem found before its file is known; `offset` is a UTF-16 index into the parsed text. */
export interface Issue {
  code: ManifestErrorCode;
  detail: string;
  offset?: number | undefined;
  key?: string;
  suggestion?: string;
  cause?: unknown;
  /** For an overlay value problem reported as INVALID_OVERLAY: the problem it wraps. */
  original?: Issue;
}

/** The most problems one layer or overlay reports; past it, collecting stops (a file with 20,000 unknown keys reports the first 100). */
export const MAX_REPORTED_ISSUES = 100;

/** Turns an issue into a ManifestError located in `file`; pass `locate` when turning many issues of one text. */
export function toManifestError(
  issue: Issue,
  file: string | undefined,
  text: string,
  locate: LineLocator = lineLocator(text),
): ManifestError {
  const position = issue.offset === undefined ? undefined : locate(issue.offset);
  return new ManifestError(issue.code, issue.detail, {
    ...(file === undefined ? {} : { file }),
    ...(position === undefined ? {} : position),
    ...(issue.key === undefined ? {} : { key: issue.key }),
    ...(issue.suggestion === undefined ? {} : { suggestion: issue.suggestion }),
    ...(issue.original !== undefined
      ? { cause: toManifestError(issue.original, file, text, locate) }
      : issue.cause === undefined
        ? {}
        : { cause: issue.cause }),
  });
}

/** Issues ordered by position (unpositioned last), duplicates of code and offset dropped, at most MAX_REPORTED_ISSUES. */
export function sortIssues(issues: readonly Issue[]): Issue[] {
  const seen = new Set<string>();
  const unique = issues.filter((issue) => {
    const id = `${issue.code}@${issue.offset ?? ""}@${issue.key ?? ""}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  return unique
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => (a.issue.offset ?? Infinity) - (b.issue.offset ?? Infinity) || a.index - b.index)
    .slice(0, MAX_REPORTED_ISSUES)
    .map(({ issue }) => issue);
}
