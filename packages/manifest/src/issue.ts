import { ManifestError } from "./manifest-error.ts";
import type { ManifestErrorCode } from "./manifest-error.ts";

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

/** Segments of a path inside a manifest value: mapping keys and sequence indexes. */
export type PathSegments = readonly (string | number)[];

/** Map key for a path; joined with NUL because keys never contain it after validation. */
export function pathKey(segments: PathSegments): string {
  return segments.join("\u0000");
}

/** Human form of a path: `scope.allow[0].target`. */
export function formatKey(segments: PathSegments): string {
  let out = "";
  for (const segment of segments) {
    out += typeof segment === "number" ? `[${segment}]` : out === "" ? segment : `.${segment}`;
  }
  return out;
}

/** The most problems one layer or overlay reports; past it, collecting stops (a file with 20,000 unknown keys reports the first 100). */
export const MAX_REPORTED_ISSUES = 100;

/** Turns offsets in one text into 1-based line and column. */
export type LineLocator = (offset: number) => { line: number; column: number };

/** A locator for `text`: its line starts are found once, each lookup is a binary search. */
export function lineLocator(text: string): LineLocator {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    const end = Math.min(Math.max(offset, 0), text.length);
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((starts[mid] as number) <= end) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: end - (starts[low] as number) + 1 };
  };
}

/** 1-based line and column of `offset` in `text`; for many offsets in one text, use lineLocator. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  return lineLocator(text)(offset);
}

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
