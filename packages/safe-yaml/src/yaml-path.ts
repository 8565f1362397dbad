/** Segments of a path inside a YAML value: mapping keys and sequence indexes. */
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
