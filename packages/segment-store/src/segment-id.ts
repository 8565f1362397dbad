const SEGMENT_ID = /^seg-([0-9]{10,})$/;

/** The id of the `n`-th segment of a store: `seg-` and a zero-padded counter, so ids sort oldest first. */
export function formatSegmentId(n: number): string {
  return `seg-${String(n).padStart(10, "0")}`;
}

/** The counter of a segment id, or `undefined` when `id` is not one. */
export function parseSegmentId(id: string): number | undefined {
  const match = SEGMENT_ID.exec(id);
  if (match === null) return undefined;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Sort order of segment ids: oldest first. */
export function compareSegmentIds(a: string, b: string): number {
  return (parseSegmentId(a) ?? 0) - (parseSegmentId(b) ?? 0) || (a < b ? -1 : a > b ? 1 : 0);
}
