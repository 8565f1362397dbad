import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { promisify } from "node:util";
import { closeQuietly, entryPath, errnoOf, kindOf, SAFE_FLAGS } from "./descriptor.ts";
import { stopIfAborted } from "./fs-tool.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import { type CallContext, failure, type Located } from "./locate.ts";
import { requirePermission, shown } from "./scope-check.ts";
import { requireRegular } from "./text-file.ts";

const fsyncAsync = promisify(fsync);

/** 12 random hex digits for a temp name. */
function randomSuffix(): string {
  // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
  return process.getBuiltinModule("node:crypto").randomBytes(6).toString("hex");
}

/** What a finished write did. */
export interface WriteOutcome {
  /** Bytes of the file it replaced; undefined when the file is new. */
  readonly replacedBytes: number | undefined;
}

/**
 * Replaces (or creates) `located.name` with `bytes`, atomically: a new temp file in the same
 * open directory (O_CREAT|O_EXCL|O_NOFOLLOW, so it can never be an existing file or a link),
 * written and fsynced, then renamed over the target and the directory fsynced. Every name is
 * resolved through the directory descriptor, so nothing lands anywhere but the checked
 * directory. A failure, or `signal` aborted before the rename, removes the temp file; the
 * target is then untouched.
 */
export async function atomicWrite(
  ctx: CallContext,
  located: Located,
  bytes: Buffer,
  signal?: AbortSignal,
): Promise<WriteOutcome> {
  const target = entryPath(located.dir, located.name);
  let mode = 0o666;
  let replacedBytes: number | undefined;
  try {
    const existing = lstatSync(target);
    requireRegular(ctx, located.path, kindOf(existing));
    mode = existing.mode & 0o7777;
    replacedBytes = existing.size;
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw failure(ctx, located.path, error, "the file");
  }
  const tempName = `.${located.name.slice(0, 64)}.${randomSuffix()}.tmp`;
  // The temp file is a sibling of the target: the scope must allow writing it as well.
  requirePermission(ctx.scope, ctx.tool, ctx.asked, `${located.dir.real}/${tempName}`, "write", true);
  const temp = entryPath(located.dir, tempName);
  let fd: number | undefined;
  let renamed = false;
  try {
    // A new file gets the usual 0o666 minus the umask; a replaced one keeps its permission bits.
    const createMode = replacedBytes === undefined ? 0o666 : 0o600;
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | SAFE_FLAGS, createMode);
    if (!fstatSync(fd).isFile()) throw new Error(`${tempName} is not a regular file`);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    if (replacedBytes !== undefined) fchmodSync(fd, mode);
    await fsyncAsync(fd);
    closeSync(fd);
    fd = undefined;
    stopIfAborted(ctx.tool, signal, "the file was left as it was");
    renameSync(temp, target);
    renamed = true;
    await fsyncAsync(located.dir.fd);
    return { replacedBytes };
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    if (!renamed) {
      try {
        unlinkSync(temp);
      } catch {
        // Never created, or already gone.
      }
    }
    if (FsToolsError.is(error)) throw error;
    throw new FsToolsError(
      "IO_ERROR",
      `${ctx.tool}: writing ${shown(ctx.asked, located.path)} failed${renamed ? " after the rename (the new content is in place but may not be durable yet)" : "; the file was left as it was"}: ${error instanceof Error ? error.message : String(error)}`,
      { tool: ctx.tool, path: located.path, cause: error },
    );
  }
}
