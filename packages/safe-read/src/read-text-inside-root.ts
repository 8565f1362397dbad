import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { openedPath, readUpTo } from "./bounded-read.ts";
import { decodeUtf8Text } from "./decode-utf8-text.ts";
import { completeUtf8Length } from "./utf8.ts";
import { isSameOrInside, isStrictlyInside } from "./path-containment.ts";
import { type ResolvedRoot, realRootOf } from "./resolved-root.ts";

// O_NONBLOCK: a FIFO swapped in after the stat check must not wait for a writer.
// O_NOFOLLOW: the last component must not have become a symlink since it was checked.
// O_NOCTTY: a terminal swapped in never becomes the controlling one.
const OPEN_FLAGS =
  constants.O_RDONLY |
  (constants.O_NONBLOCK ?? 0) |
  (constants.O_NOFOLLOW ?? 0) |
  (constants.O_NOCTTY ?? 0) |
  ((constants as { O_CLOEXEC?: number }).O_CLOEXEC ?? 0);

/** Where a file may be read from, how much of it, and how its text is given back. */
export interface ReadInsideRootOptions {
  /**
   * The directory the file's real path must stay inside: a path (resolved to its real path
   * here, on every call), or a root `resolveRoot` resolved once for many reads.
   */
  readonly root: string | ResolvedRoot;
  /** The most bytes read. */
  readonly maxBytes: number;
  /** A bigger file is refused (`too-large`, the default), or its first `maxBytes` are read, cut at a UTF-8 boundary. */
  readonly overLimit?: "refuse" | "cut";
  /** `strictly` (the default): the real path must be below the root; `or-same`: the root itself counts as inside. */
  readonly inside?: "strictly" | "or-same";
  /** A further check of the real path (a pod's readable scope); false is `outside-readable`. */
  readonly isReadable?: ((realPath: string) => boolean) | undefined;
  /**
   * `follow` (the default): a symlink is followed and its target judged. `refuse`: the path is
   * taken as it is and a symlink is `not-a-file` (a caller that resolved the path itself).
   */
  readonly symlinks?: "follow" | "refuse";
  /** `text` (the default): strict UTF-8, one BOM dropped. `lf`: also CRLF and lone CR made LF. `bytes`: not decoded. */
  readonly decode?: "text" | "lf" | "bytes";
}

/** A file read inside its root. */
export interface TextInsideRoot {
  /** The real path read (the open descriptor's, where the system tells it). */
  readonly file: string;
  /** The text (empty with `decode: "bytes"`). */
  readonly text: string;
  /** The bytes read: the whole file, or its first `maxBytes` when `cut`. */
  readonly bytes: Buffer;
  /** Bytes of `bytes` that are in `text` (fewer than `bytes.length` only when a cut fell inside a character). */
  readonly textBytes: number;
  /** Size of the file when it was opened. */
  readonly size: number;
  /** True when the file holds more than `maxBytes` (only with `overLimit: "cut"`). */
  readonly cut: boolean;
  /** Permission bits of the file. */
  readonly mode: number;
}

/** Why a file was not read: each caller turns this into its own error or warning. */
export type ReadRefusal =
  /** The root could not be resolved. */
  | { readonly reason: "root-unresolved"; readonly root: string; readonly errno?: string; readonly cause: unknown }
  /** Nothing at the path (`dangling`: a symlink to nothing). */
  | { readonly reason: "missing"; readonly file: string; readonly dangling: boolean; readonly cause: unknown }
  /** The path could not be resolved (`errno` says why: `ELOOP` for a symlink loop). */
  | { readonly reason: "unresolved"; readonly file: string; readonly errno?: string; readonly cause: unknown }
  /** The real path (or the open descriptor's) is outside the root. */
  | { readonly reason: "outside-root"; readonly file: string; readonly real: string; readonly root: string }
  /** The real path is inside the root but `isReadable` said no. */
  | { readonly reason: "outside-readable"; readonly file: string; readonly real: string }
  /** Not a regular file (checked before it is opened, so a FIFO or device is never opened). */
  | { readonly reason: "not-a-file"; readonly file: string; readonly stats: Stats }
  /** Over `maxBytes` (`size` undefined: the file grew past it while being read). */
  | { readonly reason: "too-large"; readonly file: string; readonly size: number | undefined }
  /** The file could not be stat'ed or opened after it was resolved (`stage` says which). */
  | {
      readonly reason: "open-failed";
      readonly file: string;
      readonly stage: "stat" | "open";
      readonly errno?: string;
      readonly cause: unknown;
    }
  /** Another file (or no regular file) was found at the path once it was open. */
  | { readonly reason: "replaced"; readonly file: string; readonly stats: Stats }
  /** Reading failed. */
  | { readonly reason: "read-failed"; readonly file: string; readonly cause: unknown }
  /** Not UTF-8: where the first bad byte is (0-based offset, 1-based line and byte column). */
  | {
      readonly reason: "not-utf8";
      readonly file: string;
      readonly bytes: Buffer;
      readonly byteOffset: number;
      readonly line: number;
      readonly column: number;
      readonly cause: unknown;
    };

/** What {@link readTextInsideRoot} gives: the file, or why it was not read. */
export type ReadInsideRootResult =
  | { readonly ok: true; readonly value: TextInsideRoot }
  | ({ readonly ok: false } & ReadRefusal);

/**
 * Reads `file` only when it is a regular file whose real path stays inside the real path of
 * `options.root`, in at most `maxBytes` bytes of strict UTF-8. Never throws for what is on
 * disk: a refusal is returned, each caller words it with its own code.
 */
export function readTextInsideRoot(file: string, options: ReadInsideRootOptions): ReadInsideRootResult {
  const root = realRootOf(options.root);
  if (!root.ok)
    return refuse({ reason: "root-unresolved", root: root.root, ...errnoOf(root.cause), cause: root.cause });
  const realRoot = root.value.real;
  const inside = options.inside === "or-same" ? isSameOrInside : isStrictlyInside;
  const placeRefusal = (real: string): ReadRefusal | undefined => {
    if (!inside(realRoot, real)) return { reason: "outside-root", file, real, root: realRoot };
    if (options.isReadable !== undefined && !options.isReadable(real))
      return { reason: "outside-readable", file, real };
    return undefined;
  };

  const located = locate(file, options, placeRefusal);
  if (!("before" in located)) return refuse(located);
  const { before, placed } = located;
  let real = located.real;
  // Checked before open, so a FIFO, socket or device is never opened at all.
  if (!before.isFile()) return refuse({ reason: "not-a-file", file: real, stats: before });
  const cutAllowed = options.overLimit === "cut";
  // A file not placed yet is refused for its place before its size, as one resolved first is.
  if (placed && !cutAllowed && before.size > options.maxBytes)
    return refuse({ reason: "too-large", file: real, size: before.size });

  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (cause) {
    return refuse({ reason: "open-failed", file: real, stage: "open", ...errnoOf(cause), cause });
  }
  let read: { bytes: Buffer; cut: boolean };
  let after: Stats;
  try {
    after = fstatSync(fd);
    if (!after.isFile() || after.dev !== before.dev || after.ino !== before.ino) {
      return refuse({ reason: "replaced", file: real, stats: after });
    }
    // Where the descriptor really is, before a byte is read: a directory swapped for a symlink
    // after the checks above is caught here, and a file not placed yet is placed here.
    let opened = openedPath(fd);
    if (opened === undefined && !placed && options.symlinks !== "refuse") {
      // /proc failed us after all: the real path counts only when it leads to the open file.
      opened = realpathSync.native(file);
      const there = statSync(opened);
      if (there.dev !== after.dev || there.ino !== after.ino)
        return refuse({ reason: "replaced", file: real, stats: there });
    }
    if (opened !== undefined && (opened !== real || !placed)) {
      const misplaced = placeRefusal(opened);
      if (misplaced !== undefined) return refuse(misplaced);
      real = opened;
    }
    if (!cutAllowed && after.size > options.maxBytes)
      return refuse({ reason: "too-large", file: real, size: after.size });
    read = readUpTo(fd, after.size, options.maxBytes);
  } catch (cause) {
    return refuse({ reason: "read-failed", file: real, cause });
  } finally {
    try {
      closeSync(fd);
    } catch {
      // A failed close of a read-only descriptor loses nothing.
    }
  }
  if (read.cut && !cutAllowed) return refuse({ reason: "too-large", file: real, size: undefined });

  const value = { file: real, bytes: read.bytes, size: after.size, cut: read.cut, mode: after.mode & 0o7777 };
  if (options.decode === "bytes") return { ok: true, value: { ...value, text: "", textBytes: read.bytes.length } };
  const textBytes = read.cut ? completeUtf8Length(read.bytes) : read.bytes.length;
  const decoded = decodeUtf8Text(read.bytes.subarray(0, textBytes), {
    newlines: options.decode === "lf" ? "lf" : "keep",
  });
  if (!decoded.ok)
    return refuse({ reason: "not-utf8", file: real, bytes: read.bytes, ...decoded.at, cause: decoded.cause });
  return { ok: true, value: { ...value, text: decoded.text, textBytes } };
}

/** Where a file is before it is opened: the path to open, its stat, and whether that path was placed inside the root. */
interface Located {
  readonly real: string;
  readonly before: Stats;
  /** False: the path is placed by the open descriptor's path, before anything is read. */
  readonly placed: boolean;
}

/**
 * Finds the file to open. A path taken as it is (`symlinks: "refuse"`), or a regular file that
 * is not a symlink on a system whose descriptors tell their path, is opened where it is
 * (O_NOFOLLOW) and placed by its descriptor; anything else is resolved and placed first.
 */
function locate(
  file: string,
  options: ReadInsideRootOptions,
  placeRefusal: (real: string) => ReadRefusal | undefined,
): Located | ReadRefusal {
  if (options.symlinks === "refuse") {
    try {
      return { real: file, before: lstatSync(file), placed: false };
    } catch (cause) {
      return resolveFailure(file, cause, false);
    }
  }
  if (hasProcFd()) {
    let link: Stats | undefined;
    try {
      link = lstatSync(file);
    } catch (cause) {
      const { errno } = errnoOf(cause);
      // Nothing at the path (no dangling link either: lstat sees a link itself).
      if (errno === "ENOENT" || errno === "ENOTDIR") return resolveFailure(file, cause, false);
    }
    // Only a regular file skips the resolve: whatever else it is is told apart as resolved below.
    if (link?.isFile()) return { real: file, before: link, placed: false };
  }
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch (cause) {
    return resolveFailure(file, cause, isSymlink(file));
  }
  const misplaced = placeRefusal(real);
  if (misplaced !== undefined) return misplaced;
  try {
    return { real, before: statSync(real), placed: true };
  } catch (cause) {
    return { reason: "open-failed", file: real, stage: "stat", ...errnoOf(cause), cause };
  }
}

/** /proc/self/fd exists (Linux): an open descriptor tells where it really is. */
let procFd: boolean | undefined;
function hasProcFd(): boolean {
  procFd ??= existsSync("/proc/self/fd");
  return procFd;
}

function refuse(refusal: ReadRefusal): ReadInsideRootResult {
  return { ok: false, ...refusal };
}

/** A failed resolve: nothing there, or another reason (`dangling`: the path is a symlink to nothing). */
function resolveFailure(file: string, cause: unknown, symlink: boolean): ReadRefusal {
  const { errno } = errnoOf(cause);
  if (errno === "ENOENT" || errno === "ENOTDIR") return { reason: "missing", file, dangling: symlink, cause };
  return { reason: "unresolved", file, ...(errno === undefined ? {} : { errno }), cause };
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

function errnoOf(error: unknown): { errno?: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? { errno: code } : {};
}
