import { didYouMean, errorText } from "@insomnia/errors";
import { readTextInsideRoot } from "@insomnia/safe-read";
import { readdirSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
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

/** Reads `file` only if it is a regular file whose real path stays inside the real path of `root`. */
export function readPromptFile(req: ReadRequest): ReadResult {
  const { ref, root, file } = req;
  const fail = (code: PromptLoaderErrorCode, message: string, cause?: unknown): PromptLoaderError =>
    new PromptLoaderError(code, message, { ref, file, cause });
  const read = readTextInsideRoot(file, { root, maxBytes: req.maxBytes, decode: "lf" });
  if (read.ok) return { text: read.value.text, file: read.value.file };
  switch (read.reason) {
    case "root-unresolved":
      if (read.errno === "ENOENT" || read.errno === "ENOTDIR") {
        throw fail(
          "NOT_FOUND",
          `no file at ${file} (the prompts directory ${root} does not exist; create it and the file)`,
          read.cause,
        );
      }
      if (read.errno === "ELOOP")
        throw fail("NOT_A_FILE", `the prompts directory ${root} is a symlink loop; fix or remove the link`, read.cause);
      throw fail("READ_FAILED", `cannot resolve the prompts directory ${root}: ${errorText(read.cause)}`, read.cause);
    case "missing":
      throw fail(
        "NOT_FOUND",
        `no file at ${file}${siblingHint(ref, file)} (references never fall back to another prefix; create the file or fix the reference)`,
        read.cause,
      );
    case "unresolved":
      if (read.errno === "ELOOP") {
        throw fail("NOT_A_FILE", `${file} is a symlink loop, not a regular file; fix or remove the link`, read.cause);
      }
      throw fail("READ_FAILED", `cannot resolve ${file}: ${errorText(read.cause)}`, read.cause);
    case "outside-root":
    case "outside-readable":
      throw fail(
        "PATH_ESCAPE",
        `${file} resolves to ${read.real}, which is outside the prompts directory ${read.reason === "outside-root" ? read.root : root}; prompts must stay inside their prefix root (check symlinks)`,
      );
    case "not-a-file":
      throw fail(
        "NOT_A_FILE",
        `${read.file} is ${kindOf(read.stats)}, not a regular file; a prompt must be a .md file`,
      );
    case "too-large": {
      const got = read.size === undefined ? "" : ` ${read.size} bytes,`;
      throw fail(
        "TOO_LARGE",
        `${read.file} is${got} over the limit of ${req.maxBytes} bytes; split it into smaller prompts or raise maxBytes`,
      );
    }
    case "open-failed":
      if (read.errno === "ENOENT" || read.errno === "ENOTDIR")
        throw fail("NOT_FOUND", `no file at ${file} (it disappeared while being loaded)`, read.cause);
      if (read.errno === "ELOOP")
        throw fail("NOT_A_FILE", `${read.file} became a symlink while being loaded; try again`, read.cause);
      throw fail("READ_FAILED", `cannot open ${read.file}: ${errorText(read.cause)}`, read.cause);
    case "replaced":
      throw fail("NOT_A_FILE", `${read.file} was replaced while being loaded (now ${kindOf(read.stats)}); try again`);
    case "read-failed":
      throw fail("READ_FAILED", `cannot read ${read.file}: ${errorText(read.cause)}`, read.cause);
    case "not-utf8":
      throw new PromptLoaderError(
        "BAD_ENCODING",
        `${read.file} is not valid UTF-8 (first bad byte at offset ${read.byteOffset}); save it as UTF-8`,
        { ref, file, byteOffset: read.byteOffset, cause: read.cause },
      );
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
