import * as path from "node:path";

/** Segments of an absolute path, its root (`/`, or a drive on Windows) first; `..` and `.` resolved lexically. */
export function pathSegments(absolute: string, platform: NodeJS.Platform = process.platform): readonly string[] {
  const p = platform === "win32" ? path.win32 : path.posix;
  const resolved = p.resolve(absolute);
  const root = p.parse(resolved).root;
  const rest = resolved
    .slice(root.length)
    .split(p.sep)
    .filter((s) => s !== "");
  return [root, ...rest];
}

/**
 * Whether `candidate` is `target` or below it, by whole segments (never by string prefix, so
 * `/repo2` is not under `/repo`). `maxDepth` limits how far below: 0 = only `target`, 1 = also its direct children.
 */
export function segmentsWithin(
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

/** True when `candidate` is `dir` itself or anything below it (absolute paths, compared by segments). */
export function isSameOrInside(dir: string, candidate: string, platform: NodeJS.Platform = process.platform): boolean {
  return segmentsWithin(folded(candidate, platform), folded(dir, platform));
}

/** True when `candidate` is strictly below `dir`, never `dir` itself (absolute paths, compared by segments). */
export function isStrictlyInside(
  dir: string,
  candidate: string,
  platform: NodeJS.Platform = process.platform,
): boolean {
  const inner = folded(candidate, platform);
  const outer = folded(dir, platform);
  return inner.length > outer.length && segmentsWithin(inner, outer);
}

/** Windows compares paths without case. */
function folded(absolute: string, platform: NodeJS.Platform): readonly string[] {
  const segments = pathSegments(absolute, platform);
  return platform === "win32" ? segments.map((s) => s.toLowerCase()) : segments;
}
