import { isAscii, isUtf8 } from "node:buffer";
import { completeUtf8Length, readTextInsideRoot } from "@insomnia/safe-read";
import { describeKind, dirPath, entryPath, errnoOf, kindOf } from "./descriptor.ts";
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
 * Reads at most `maxBytes` of the regular file `located.name` in its open directory, taken as
 * it is (a symlink, FIFO, socket or device is never opened) and read only where the descriptor
 * is inside that directory. `undefined` when there is no such file.
 */
export function readChecked(ctx: CallContext, located: Located, maxBytes: number): FileBytes | undefined {
  const read = readTextInsideRoot(entryPath(located.dir, located.name), {
    root: dirPath(located.dir),
    maxBytes,
    overLimit: "cut",
    symlinks: "refuse",
    decode: "bytes",
  });
  if (read.ok) {
    const { bytes, size, cut, mode } = read.value;
    return { bytes, size, cut, mode };
  }
  switch (read.reason) {
    case "missing":
      if (errnoOf(read.cause) === "ENOENT") return undefined;
      throw failure(ctx, located.path, read.cause, "the file");
    case "not-a-file":
      requireRegular(ctx, located.path, kindOf(read.stats));
      throw failure(ctx, located.path, new Error("not a regular file"), "the file");
    case "replaced":
    case "outside-root":
    case "outside-readable":
      throw new FsToolsError(
        "CHANGED",
        `${ctx.tool} refused ${shown(ctx.asked, located.path)}: it was replaced during the call; nothing was read; try again`,
        { tool: ctx.tool, path: located.path },
      );
    case "root-unresolved":
    case "unresolved":
    case "open-failed":
    case "read-failed":
      throw failure(ctx, located.path, read.cause, "the file");
    case "too-large":
    case "not-utf8":
      // Not reached: a file over the limit is cut, and the bytes are not decoded here.
      throw failure(ctx, located.path, new Error(read.reason), "the file");
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

/** Checked UTF-8 bytes as a string; pure ASCII (most source files) takes V8's cheaper one-byte string path. */
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
