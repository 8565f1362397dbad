import { closeSync, constants, existsSync, fstatSync, openSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import * as path from "node:path";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const O_CLOEXEC = (constants as { O_CLOEXEC?: number }).O_CLOEXEC ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;

/**
 * Flags of every open: O_NOFOLLOW so a last component swapped for a symlink fails (ELOOP)
 * instead of being followed, O_NONBLOCK so a FIFO swapped in never waits for a writer,
 * O_NOCTTY so a terminal never becomes the controlling one.
 */
export const SAFE_FLAGS: number = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

/** Open flags of a directory descriptor. */
export const DIR_FLAGS: number = constants.O_RDONLY | O_DIRECTORY | SAFE_FLAGS;

/** Linux names every open descriptor under /proc/self/fd; elsewhere the weaker fallback below is used. */
const HAS_PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

/** A directory held open, with the path the kernel says it is at. */
export interface OpenDir {
  readonly fd: number;
  /** Absolute path of the opened directory, read back from the descriptor. */
  readonly real: string;
}

/**
 * A path that names `name` inside the directory held by `dir`, whatever happens to the
 * directory's path meanwhile: on Linux `/proc/self/fd/N/name`, which the kernel resolves
 * through the descriptor itself (so a swapped parent symlink cannot redirect it).
 */
export function entryPath(dir: OpenDir, name: string): string {
  return HAS_PROC_FD ? `/proc/self/fd/${dir.fd}/${name}` : path.join(dir.real, name);
}

/** A path for the directory itself (for readdir), resolved through the descriptor on Linux. */
export function dirPath(dir: OpenDir): string {
  return HAS_PROC_FD ? `/proc/self/fd/${dir.fd}` : dir.real;
}

/** Thrown (as a plain value) when the path was changed under the call; callers turn it into a CHANGED refusal. */
export class ChangedDuringCall {
  constructor(readonly what: string) {}
}

/**
 * Opens `dir` as a directory (never following a symlink at its last component, never
 * blocking) and reads back where the descriptor really is. `ENOENT`, `ENOTDIR` and `ELOOP`
 * propagate as errors with their codes.
 */
export function openDir(dir: string): OpenDir {
  const fd = openSync(dir, DIR_FLAGS);
  try {
    return { fd, real: descriptorPath(fd, dir) };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

/** Opens `name` inside an open directory as a directory, the same way as {@link openDir}. */
export function openChildDir(parent: OpenDir, name: string): OpenDir {
  return openDir(entryPath(parent, name));
}

/**
 * The absolute path the kernel has for an open descriptor. Linux: readlink of
 * /proc/self/fd/N. Elsewhere: realpath of `opened`, accepted only when it is the same
 * device and inode as the descriptor.
 */
export function descriptorPath(fd: number, opened: string): string {
  if (HAS_PROC_FD) {
    const link = readlinkSync(`/proc/self/fd/${fd}`);
    if (!link.startsWith("/") || link.endsWith(" (deleted)")) throw new ChangedDuringCall(`${opened} was removed`);
    return link;
  }
  const real = realpathSync.native(opened);
  const now = fstatSync(fd);
  const again = openSync(real, DIR_FLAGS);
  try {
    const there = fstatSync(again);
    if (now.dev !== there.dev || now.ino !== there.ino) throw new ChangedDuringCall(`${opened} was replaced`);
  } finally {
    closeQuietly(again);
  }
  return real;
}

/** Closes a descriptor, ignoring failures (nothing is lost by a failed close of these). */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed or never valid: nothing to do.
  }
}

/** The errno code of a Node file-system error, if it is one. */
export function errnoOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : undefined;
}

/** What kind of file a Stats describes, as list_dir and refusals name it. */
export function kindOf(stats: Stats): FileKind {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "dir";
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "char-device";
  if (stats.isBlockDevice()) return "block-device";
  return "other";
}

/** The kinds list_dir shows. */
export type FileKind = "file" | "dir" | "symlink" | "fifo" | "socket" | "char-device" | "block-device" | "other";

/** `a FIFO (named pipe)`, `a directory`, … for messages. */
export function describeKind(kind: FileKind): string {
  switch (kind) {
    case "file":
      return "a regular file";
    case "dir":
      return "a directory";
    case "symlink":
      return "a symbolic link";
    case "fifo":
      return "a FIFO (named pipe)";
    case "socket":
      return "a socket";
    case "char-device":
      return "a character device";
    case "block-device":
      return "a block device";
    default:
      return "not a regular file";
  }
}
