import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Directories programs need, mounted read-only in every sandbox when they exist. */
export const SYSTEM_DIRS: readonly string[] = Object.freeze([
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
  "/nix",
]);

/** A system directory as it is on this machine: a real directory, or a symlink (merged /usr). */
export type SystemEntry =
  | { readonly kind: "dir"; readonly path: string }
  | { readonly kind: "symlink"; readonly path: string; readonly target: string };

/** The {@link SYSTEM_DIRS} that exist here, each as a directory or a symlink to re-create. */
export function systemEntries(dirs: readonly string[] = SYSTEM_DIRS): SystemEntry[] {
  const entries: SystemEntry[] = [];
  for (const path of dirs) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries.push({ kind: "symlink", path, target: readlinkSync(path) });
      else if (stat.isDirectory()) entries.push({ kind: "dir", path });
    } catch {
      // Absent here: nothing to mount.
    }
  }
  return entries;
}

const MAX_DEPTH = 8;
const MAX_ENTRIES = 20_000;

/**
 * Entries under `root` (default `/etc`) that other users may not read: `shadow`, `sudoers`,
 * SSH host keys, `ssl/private`. A command runs as the pod's own user, so when that is root
 * these would be readable; the sandbox hides them so it shows what an ordinary user sees.
 * A directory that is hidden is not walked; symlinks are judged where they point.
 */
export function unreadableSystemEntries(root = "/etc"): string[] {
  const hidden: string[] = [];
  let seen = 0;
  const walk = (dir: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      hidden.push(dir);
      return;
    }
    for (const name of names) {
      if (++seen > MAX_ENTRIES) return;
      const path = join(dir, name);
      let mode: number;
      let isDir: boolean;
      try {
        const stat = lstatSync(path);
        if (stat.isSymbolicLink()) continue;
        mode = stat.mode;
        isDir = stat.isDirectory();
      } catch {
        continue;
      }
      const othersRead = (mode & 0o004) !== 0;
      const othersEnter = (mode & 0o001) !== 0;
      if (!othersRead || (isDir && !othersEnter)) hidden.push(path);
      else if (isDir && depth < MAX_DEPTH) walk(path, depth + 1);
    }
  };
  walk(root, 1);
  return hidden.sort();
}
