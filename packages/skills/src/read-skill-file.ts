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
import { firstInvalidUtf8Offset, isStrictlyInside, openedPath, readCapped } from "@insomnia/errors";
import { SkillsError } from "./skills-error.ts";

/** Largest SKILL.md read: 1 MiB. */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;

/** Decides whether the pod may read a path (a real path); the pod passes its scope's `isReadable`. */
export type IsReadable = (path: string) => boolean;

/** Where a SKILL.md may be read from. */
export interface SkillFileRules {
  /** Real path of the skill's root; the file's real path must be strictly inside it. */
  readonly rootDir: string;
  /** For a workspace root: the file's real path must also be readable. */
  readonly isReadable?: IsReadable | undefined;
  readonly maxBytes?: number;
}

/** A SKILL.md read under the rules: its text (BOM dropped, CRLF and CR turned into LF) and real path. */
export interface SkillFile {
  readonly text: string;
  readonly file: string;
  readonly bytes: number;
}

// O_NONBLOCK: a FIFO swapped in after the stat check must not wait for a writer.
// O_NOFOLLOW: the last component must not have become a symlink since realpath.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Reads `file` only if it is a regular file of at most 1 MiB whose real path stays inside
 * `rootDir` (and is readable, when a check is given), in strict UTF-8. A FIFO or device is
 * refused before it is opened, and opened non-blocking in case it was swapped in. Throws a
 * {@link SkillsError} naming the file. `lstat`: the file's lstat if the caller just took it.
 */
export function readSkillFile(file: string, rules: SkillFileRules, lstat?: Stats): SkillFile {
  return readSkillFileAt(file, rules, lstat, undefined);
}

/**
 * {@link readSkillFile} of a SKILL.md the walk of discoverSkills found: `lstat` is its lstat,
 * `walkedReal` its directory's real path as the walk built it (strictly inside the root) plus
 * `/SKILL.md`. When the open descriptor is at that very path, the file is inside the root
 * already; the readable check (and every other) still applies.
 */
export function readWalkedSkillFile(file: string, rules: SkillFileRules, lstat: Stats, walkedReal: string): SkillFile {
  return readSkillFileAt(file, rules, lstat, walkedReal);
}

function readSkillFileAt(
  file: string,
  rules: SkillFileRules,
  lstat: Stats | undefined,
  walkedReal: string | undefined,
): SkillFile {
  const maxBytes = rules.maxBytes ?? MAX_SKILL_FILE_BYTES;
  const place = placeBeforeOpen(file, rules, lstat);
  const { before } = place;
  const shown = place.real;
  if (!before.isFile()) {
    throw new SkillsError(
      "SKILL_NOT_A_FILE",
      `${shown} is ${kindOf(before)}, not a regular file; a SKILL.md must be a file`,
      {
        file: shown,
      },
    );
  }
  if (before.size > maxBytes) throw tooLarge(shown, before.size, maxBytes);

  let real = shown;
  let fd: number;
  try {
    fd = openSync(real, OPEN_FLAGS);
  } catch (cause) {
    throw new SkillsError("SKILL_UNREADABLE", `cannot open ${real} (${errnoText(cause)})`, { file: real, cause });
  }
  let bytes: Uint8Array;
  try {
    const after = fstatSync(fd);
    if (!after.isFile() || after.dev !== before.dev || after.ino !== before.ino) {
      throw new SkillsError("SKILL_NOT_A_FILE", `${real} was replaced while being read; try again`, { file: real });
    }
    // Where the descriptor really is, checked before a byte is read: the one place check of a
    // file taken at its path (placeBeforeOpen), a second one after realpath.
    const opened = openedPath(fd);
    if (!place.checked) checkPlace(file, opened ?? realpathSync.native(file), rules, walkedReal);
    else if (opened !== undefined && opened !== real) checkPlace(file, opened, rules, undefined);
    if (opened !== undefined) real = opened;
    const read = readCapped(fd, after.size, maxBytes);
    if (read === undefined) throw tooLarge(real, undefined, maxBytes);
    bytes = read;
  } catch (error) {
    if (SkillsError.is(error)) throw error;
    throw new SkillsError("SKILL_UNREADABLE", `cannot read ${real} (${errnoText(error)})`, {
      file: real,
      cause: error,
    });
  } finally {
    try {
      closeSync(fd);
    } catch {
      // A failed close of a read-only descriptor loses nothing.
    }
  }

  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch (cause) {
    const offset = firstInvalidUtf8Offset(bytes) ?? bytes.length;
    const { line, column } = bytePosition(bytes, offset);
    throw new SkillsError(
      "SKILL_NOT_UTF8",
      `is not valid UTF-8 (first bad byte at offset ${offset}); save it as UTF-8`,
      {
        file: real,
        line,
        column,
        cause,
      },
    );
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text: text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text, file: real, bytes: bytes.length };
}

/** /proc/self/fd exists (Linux): an open descriptor tells where it really is. */
let procFd: boolean | undefined;

/**
 * Where `file` is, and its stat, before it is opened. A SKILL.md that is not itself a symlink,
 * on a system with /proc/self/fd, is taken at its path (lstat: a FIFO or device is refused
 * before open): it is opened with O_NOFOLLOW and its real path checked on the descriptor
 * before anything is read. Otherwise the real path is resolved and checked first.
 */
function placeBeforeOpen(
  file: string,
  rules: SkillFileRules,
  lstat: Stats | undefined,
): { real: string; before: Stats; checked: boolean } {
  procFd ??= existsSync("/proc/self/fd");
  if (procFd) {
    let link: Stats;
    try {
      link = lstat ?? lstatSync(file);
    } catch (cause) {
      throw new SkillsError("SKILL_UNREADABLE", `cannot read ${file} (${errnoText(cause)})`, { file, cause });
    }
    if (!link.isSymbolicLink()) return { real: file, before: link, checked: false };
  }
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch (cause) {
    throw new SkillsError("SKILL_UNREADABLE", `cannot resolve ${file} (${errnoText(cause)})`, { file, cause });
  }
  checkPlace(file, real, rules, undefined);
  try {
    return { real, before: statSync(real), checked: true };
  } catch (cause) {
    throw new SkillsError("SKILL_UNREADABLE", `cannot read ${real} (${errnoText(cause)})`, { file: real, cause });
  }
}

/**
 * The real path must be strictly inside the root and, for a workspace root, readable by the
 * pod. `inRoot`: a path known to be strictly inside the root (the walk's), which needs no
 * containment check when the real path is that path.
 */
function checkPlace(file: string, real: string, rules: SkillFileRules, inRoot: string | undefined): void {
  if (real !== inRoot && !isStrictlyInside(rules.rootDir, real)) {
    throw new SkillsError(
      "SKILL_OUTSIDE_ROOT",
      `${file} resolves to ${real}, outside its skills directory ${rules.rootDir}; a skill must stay inside its root (check symlinks)`,
      { file },
    );
  }
  if (rules.isReadable !== undefined && !rules.isReadable(real)) {
    throw new SkillsError(
      "SKILL_OUTSIDE_SCOPE",
      `${file} resolves to ${real}, which is outside the pod's readable scope; move the skill or allow reading it`,
      { file },
    );
  }
}

function tooLarge(file: string, size: number | undefined, maxBytes: number): SkillsError {
  const got = size === undefined ? "" : ` ${size} bytes,`;
  return new SkillsError(
    "SKILL_TOO_LARGE",
    `${file} is${got} over the limit of ${maxBytes} bytes; move detail into files next to SKILL.md`,
    { file },
  );
}

/** 1-based line and byte column of a byte offset. */
function bytePosition(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  return "not a regular file";
}

function errnoText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}
