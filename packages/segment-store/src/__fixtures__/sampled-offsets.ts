import { DEEP_TESTS } from "../../../../test/support/property-runs.ts";

/**
 * The offsets `first`..`last` (both included) an every-byte test checks, in order: every one on
 * the deep run; on the quick run a fixed sample that always holds the first and last three, the
 * two either side of each line end in `lineEnds`, and every `stride`th offset between them.
 */
export function sampledOffsets(first: number, last: number, lineEnds: readonly number[], stride: number): number[] {
  const all = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  if (DEEP_TESTS) return all;
  return all.filter(
    (offset) =>
      offset - first < 3 ||
      last - offset < 3 ||
      offset % stride === 0 ||
      lineEnds.some((end) => Math.abs(end - offset) <= 2),
  );
}
