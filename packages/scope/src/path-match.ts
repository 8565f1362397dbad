import * as path from "node:path";

/** Segments of a canonical absolute path, the root (`/`, or a drive on Windows) first. */
export function segmentsOf(canonical: string): readonly string[] {
  const root = path.parse(canonical).root;
  const rest = canonical
    .slice(root.length)
    .split(path.sep)
    .filter((s) => s !== "");
  return [root, ...rest];
}

/**
 * Whether canonical `candidate` is `target` or below it, by whole segments (never by string
 * prefix, so `/repo2` is not under `/repo`). `maxDepth` limits how far below: 1 = direct children.
 */
export function isWithin(
  candidate: readonly string[],
  target: readonly string[],
  maxDepth: number = Number.POSITIVE_INFINITY,
): boolean {
  if (candidate.length < target.length || candidate.length - target.length > maxDepth) return false;
  for (let i = 0; i < target.length; i += 1) {
    if (candidate[i] !== target[i]) return false;
  }
  return true;
}
