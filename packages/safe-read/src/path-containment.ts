import * as path from "node:path";

const SLASH = 0x2f;
// An empty segment (`//`, a trailing `/`), or a `.` or `..` one.
const NOT_PLAIN = /\/(?:\.{1,2})?(?:\/|$)/;

/**
 * An absolute POSIX path that is already what `pathSegments` would make of it (as real paths
 * are): no empty, `.` or `..` segment, no trailing `/`. Two such paths compare by their text,
 * a prefix ending at a `/` being a whole-segment prefix.
 */
function isPlain(absolute: string): boolean {
  return absolute.length > 1 && absolute.charCodeAt(0) === SLASH && !NOT_PLAIN.test(absolute);
}

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
  if (platform !== "win32" && isPlain(dir) && isPlain(candidate)) {
    return candidate === dir || (candidate.startsWith(dir) && candidate.charCodeAt(dir.length) === SLASH);
  }
  return segmentsWithin(folded(candidate, platform), folded(dir, platform));
}

/** True when `candidate` is strictly below `dir`, never `dir` itself (absolute paths, compared by segments). */
export function isStrictlyInside(
  dir: string,
  candidate: string,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (platform !== "win32" && isPlain(dir) && isPlain(candidate)) {
    return candidate.startsWith(dir) && candidate.charCodeAt(dir.length) === SLASH;
  }
  const inner = folded(candidate, platform);
  const outer = folded(dir, platform);
  return inner.length > outer.length && segmentsWithin(inner, outer);
}

/** Windows compares paths without case. */
function folded(absolute: string, platform: NodeJS.Platform): readonly string[] {
  const segments = pathSegments(absolute, platform);
  return platform === "win32" ? segments.map((s) => s.toLowerCase()) : segments;
}
