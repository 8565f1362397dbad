import { isAscii, isUtf8 } from "node:buffer";
import { constants, fstatSync, lstatSync, openSync } from "node:fs";
import { readUpTo } from "@insomnia/errors";
import { closeQuietly, describeKind, entryPath, errnoOf, kindOf, SAFE_FLAGS } from "./descriptor.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import { type CallContext, failure, type Located } from "./locate.ts";
import { shown } from "./scope-check.ts";

/** A regular file's first bytes, read through a descriptor that was checked. */
export interface FileBytes {
  readonly bytes: Buffer;
  /** Size of the file when it was opened. */
  readonly size: number;
  /** True when the file holds more than was read. */
  readonly cut: boolean;
  /** Permission bits, for a write that replaces the file. */
  readonly mode: number;
}

/**
 * Reads at most `maxBytes` of the regular file `located.name` in its open directory: lstat
 * first (a FIFO, socket or device is never opened), then open with O_NOFOLLOW|O_NONBLOCK
 * and fstat, which must show the same regular file. `undefined` when there is no such file.
 */
export function readChecked(ctx: CallContext, located: Located, maxBytes: number): FileBytes | undefined {
  const at = entryPath(located.dir, located.name);
  let before: ReturnType<typeof lstatSync>;
  try {
    before = lstatSync(at);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw failure(ctx, located.path, error, "the file");
  }
  requireRegular(ctx, located.path, kindOf(before));
  let fd: number;
  try {
    fd = openSync(at, constants.O_RDONLY | SAFE_FLAGS);
  } catch (error) {
    throw failure(ctx, located.path, error, "the file");
  }
  try {
    const after = fstatSync(fd);
    if (!after.isFile() || after.dev !== before.dev || after.ino !== before.ino) {
      throw new FsToolsError(
        "CHANGED",
        `${ctx.tool} refused ${shown(ctx.asked, located.path)}: it was replaced during the call; nothing was read; try again`,
        { tool: ctx.tool, path: located.path },
      );
    }
    const { bytes, cut } = readUpTo(fd, after.size, maxBytes);
    return { bytes, size: after.size, cut, mode: after.mode & 0o7777 };
  } catch (error) {
    throw failure(ctx, located.path, error, "the file");
  } finally {
    closeQuietly(fd);
  }
}

/** Refuses anything but a regular file, naming what it is. */
export function requireRegular(ctx: CallContext, at: string, kind: ReturnType<typeof kindOf>): void {
  if (kind === "file") return;
  const hint =
    kind === "dir"
      ? "; use list_dir for a directory"
      : kind === "symlink"
        ? " that appeared during the call; try again"
        : `; ${ctx.tool} works on regular files only`;
  throw new FsToolsError(
    kind === "symlink" ? "CHANGED" : "NOT_A_FILE",
    `${ctx.tool} refused ${shown(ctx.asked, at)}: it is ${describeKind(kind)}${hint}; nothing was read`,
    { tool: ctx.tool, path: at },
  );
}

/** The bytes as text, or a NOT_TEXT refusal (see {@link textBytes}). */
export function decodeText(ctx: CallContext, at: string, bytes: Buffer, cut: boolean): string {
  return utf8Text(textBytes(ctx, at, bytes, cut));
}

/** Checked UTF-8 bytes as a string; pure ASCII (most source files) takes V8's one-byte path, ten times faster. */
export function utf8Text(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

/**
 * The bytes, checked to be text, or a NOT_TEXT refusal: a NUL byte means binary; anything but
 * valid UTF-8 is refused (a cut file may end inside a character: those last bytes are dropped).
 */
export function textBytes(ctx: CallContext, at: string, bytes: Buffer, cut: boolean): Buffer {
  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    throw new FsToolsError(
      "NOT_TEXT",
      `${ctx.tool} refused ${shown(ctx.asked, at)}: it looks binary (a NUL byte at offset ${nul}); ${ctx.tool} works on UTF-8 text files only`,
      { tool: ctx.tool, path: at },
    );
  }
  const usable = cut ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes;
  if (!isUtf8(usable)) {
    throw new FsToolsError(
      "NOT_TEXT",
      `${ctx.tool} refused ${shown(ctx.asked, at)}: it is not valid UTF-8 text; ${ctx.tool} works on UTF-8 text files only`,
      { tool: ctx.tool, path: at },
    );
  }
  return usable;
}

/** Length of `bytes` without a trailing incomplete UTF-8 sequence (at most 3 bytes are dropped). */
export function completeUtf8Length(bytes: Buffer): number {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (bytes[i]! & 0xc0) === 0x80) {
    i -= 1;
    continuation += 1;
  }
  if (i < 0) return bytes.length;
  const lead = bytes[i]!;
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return need > continuation ? i : bytes.length;
}
