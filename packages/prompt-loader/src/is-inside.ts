import * as path from "node:path";

/** True when `child` is strictly below `root`, compared by whole path segments (both absolute, real paths). */
export function isInside(root: string, child: string, platform: NodeJS.Platform = process.platform): boolean {
  const p = platform === "win32" ? path.win32 : path.posix;
  const fold = (s: string): string => (platform === "win32" ? s.toLowerCase() : s);
  const rootSegs = fold(p.resolve(root))
    .split(p.sep)
    .filter((s) => s !== "");
  const childSegs = fold(p.resolve(child))
    .split(p.sep)
    .filter((s) => s !== "");
  if (childSegs.length <= rootSegs.length) return false;
  return rootSegs.every((seg, i) => childSegs[i] === seg);
}
