import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Everything observable about a tree: per entry its kind, inode, size, mtime and content hash (or link target). */
export function snapshot(dir: string, skip: (relative: string) => boolean = () => false): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (relative: string): void => {
    const full = relative === "" ? dir : join(dir, relative);
    const stats = lstatSync(full, { bigint: true });
    let detail: string;
    if (stats.isSymbolicLink()) detail = `link ${readlinkSync(full)}`;
    else if (stats.isFile()) detail = `file ${createHash("sha256").update(readFileSync(full)).digest("hex")}`;
    else if (stats.isDirectory()) detail = "dir";
    else detail = "special";
    seen.set(relative, `${detail} ino=${stats.ino} size=${stats.size} mtime=${stats.mtimeNs} mode=${stats.mode}`);
    if (stats.isDirectory()) {
      for (const name of readdirSync(full).sort()) {
        const child = relative === "" ? name : join(relative, name);
        if (!skip(child)) visit(child);
      }
    }
  };
  visit("");
  return seen;
}

/** The entries whose snapshot line differs, appeared or disappeared. */
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [key, value] of before) {
    const now = after.get(key);
    if (now === undefined) out.push(`removed ${key}`);
    else if (now !== value) out.push(`changed ${key}: ${value} -> ${now}`);
  }
  for (const key of after.keys()) if (!before.has(key)) out.push(`created ${key}`);
  return out;
}
