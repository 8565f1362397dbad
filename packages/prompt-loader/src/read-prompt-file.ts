import { didYouMean, errorText, isStrictlyInside, openedPath, readCapped } from "@insomnia/errors";
import { closeSync, constants, fstatSync, openSync, readdirSync, realpathSync, statSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { decodePromptText } from "./decode-prompt-text.ts";
import { PromptLoaderError, type PromptLoaderErrorCode } from "./prompt-loader-error.ts";

/** What to read: the reference (for messages), its prefix root and the candidate file below it. */
export interface ReadRequest {
  ref: string;
  root: string;
  file: string;
  maxBytes: number;
}

/** The normalized text of a contained regular file, with its real path. */
export interface ReadResult {
  text: string;
  file: string;
}

// O_NONBLOCK: opening a FIFO swapped in after the stat check must not wait for a writer.
// O_NOFOLLOW: the last component must not have become a symlink since realpath.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** ` (did you mean "$workspace/review"?)` when a prompt beside the missing one has a close name (a typo). */
function siblingHint(ref: string, file: string): string {
  let names: string[];
  try {
    names = readdirSync(dirname(file)).filter((name) => name.endsWith(".md") && name !== ".md");
  } catch {
    return "";
  }
  const hit = didYouMean(
    basename(file, ".md"),
    names.map((name) => name.slice(0, -3)),
  );
  return hit === undefined ? "" : ` (did you mean "${ref.slice(0, ref.lastIndexOf("/") + 1)}${hit}"?)`;
}

/**
 * Reads `file` only if it is a regular file whose real path stays inside the real path of `root`.
 * The system calls are synchronous: a prompt is a small regular file (checked before it is
 * opened), and ten sequential thread-pool round trips cost about five times the calls themselves.
 */
export function readPromptFile(req: ReadRequest): ReadResult {
  const { ref, root, file } = req;
  const fail = (code: PromptLoaderErrorCode, message: string, cause?: unknown): PromptLoaderError =>
    new PromptLoaderError(code, message, { ref, file, cause });

  let realRoot: string;
  try {
    realRoot = realpathSync.native(root);
  } catch (cause) {
    const code = errno(cause);
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw fail(
        "NOT_FOUND",
        `no file at ${file} (the prompts directory ${root} does not exist; create it and the file)`,
        cause,
      );
    }
    if (code === "ELOOP")
      throw fail("NOT_A_FILE", `the prompts directory ${root} is a symlink loop; fix or remove the link`, cause);
    throw fail("READ_FAILED", `cannot resolve the prompts directory ${root}: ${errorText(cause)}`, cause);
  }

  let realFile: string;
  try {
    realFile = realpathSync.native(file);
  } catch (cause) {
    const code = errno(cause);
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw fail(
        "NOT_FOUND",
        `no file at ${file}${siblingHint(ref, file)} (references never fall back to another prefix; create the file or fix the reference)`,
        cause,
      );
    }
    if (code === "ELOOP") {
      throw fail("NOT_A_FILE", `${file} is a symlink loop, not a regular file; fix or remove the link`, cause);
    }
    throw fail("READ_FAILED", `cannot resolve ${file}: ${errorText(cause)}`, cause);
  }
  const escapeError = (real: string): PromptLoaderError =>
    fail(
      "PATH_ESCAPE",
      `${file} resolves to ${real}, which is outside the prompts directory ${realRoot}; prompts must stay inside their prefix root (check symlinks)`,
    );
  if (!isStrictlyInside(realRoot, realFile)) throw escapeError(realFile);

  let before: Stats;
  try {
    before = statSync(realFile);
  } catch (cause) {
    throw statFailure(cause);
  }
  // Checked before open so a FIFO, socket or device is never opened at all.
  if (!before.isFile())
    throw fail("NOT_A_FILE", `${realFile} is ${kindOf(before)}, not a regular file; a prompt must be a .md file`);
  if (before.size > req.maxBytes) throw tooLarge(before.size);

  let fd: number;
  try {
    fd = openSync(realFile, OPEN_FLAGS);
  } catch (cause) {
    throw statFailure(cause);
  }
  try {
    const after = fstatSync(fd);
    if (!after.isFile() || after.dev !== before.dev || after.ino !== before.ino) {
      throw fail("NOT_A_FILE", `${realFile} was replaced while being loaded (now ${kindOf(after)}); try again`);
    }
    const openedAt = openedPath(fd) ?? realFile;
    if (openedAt !== realFile && !isStrictlyInside(realRoot, openedAt)) throw escapeError(openedAt);
    if (after.size > req.maxBytes) throw tooLarge(after.size);
    const bytes = readCapped(fd, after.size, req.maxBytes);
    if (bytes === undefined) throw tooLarge(undefined);
    const decoded = decodePromptText(bytes);
    if (!decoded.ok) {
      throw new PromptLoaderError(
        "BAD_ENCODING",
        `${realFile} is not valid UTF-8 (first bad byte at offset ${decoded.byteOffset}); save it as UTF-8`,
        { ref, file, byteOffset: decoded.byteOffset, cause: decoded.cause },
      );
    }
    return { text: decoded.text, file: realFile };
  } catch (error) {
    if (PromptLoaderError.is(error)) throw error;
    throw fail("READ_FAILED", `cannot read ${realFile}: ${errorText(error)}`, error);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // A failed close of a read-only descriptor loses nothing.
    }
  }

  function tooLarge(size: number | undefined): PromptLoaderError {
    const got = size === undefined ? "" : ` ${size} bytes,`;
    return fail(
      "TOO_LARGE",
      `${realFile} is${got} over the limit of ${req.maxBytes} bytes; split it into smaller prompts or raise maxBytes`,
    );
  }

  function statFailure(cause: unknown): PromptLoaderError {
    const code = errno(cause);
    if (code === "ENOENT" || code === "ENOTDIR")
      return fail("NOT_FOUND", `no file at ${file} (it disappeared while being loaded)`, cause);
    if (code === "ELOOP")
      return fail("NOT_A_FILE", `${realFile} became a symlink while being loaded; try again`, cause);
    return fail("READ_FAILED", `cannot open ${realFile}: ${errorText(cause)}`, cause);
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "a regular file";
}

function errno(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : undefined;
}
