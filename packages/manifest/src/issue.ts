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

/** 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = text.indexOf("\n"); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, column: end - lineStart + 1 };
}

/** Turns an issue into a ManifestError located in `file`. */
export function toManifestError(issue: Issue, file: string | undefined, text: string): ManifestError {
  const position = issue.offset === undefined ? undefined : lineColumn(text, issue.offset);
  return new ManifestError(issue.code, issue.detail, {
    ...(file === undefined ? {} : { file }),
    ...(position === undefined ? {} : position),
    ...(issue.key === undefined ? {} : { key: issue.key }),
    ...(issue.suggestion === undefined ? {} : { suggestion: issue.suggestion }),
    ...(issue.original !== undefined
      ? { cause: toManifestError(issue.original, file, text) }
      : issue.cause === undefined
        ? {}
        : { cause: issue.cause }),
  });
}

/** Issues ordered by position (unpositioned last), duplicates of code and offset dropped. */
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
    .map(({ issue }) => issue);
}
