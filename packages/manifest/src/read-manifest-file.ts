import { constants } from "node:fs";
import { open } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { MAX_MANIFEST_BYTES } from "./defaults.ts";
import { ManifestError } from "./manifest-error.ts";

/** Options for readManifestFile. */
export interface ReadManifestFileOptions {
  /** Name used as `file` in errors (default: `path`). */
  display?: string;
  /** Return undefined instead of failing when the file does not exist (default false). */
  optional?: boolean;
}

/**
 * Reads a manifest file as UTF-8 text, capped at MAX_MANIFEST_BYTES; throws ManifestError.
 * Opens non-blocking so a FIFO in place of the file cannot hang the pod.
 */
export async function readManifestFile(
  path: string,
  options: ReadManifestFileOptions = {},
): Promise<string | undefined> {
  const display = options.display ?? path;
  const optional = options.optional ?? false;
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (optional && (code === "ENOENT" || code === "ENOTDIR")) return undefined;
    const why = code === "ENOENT" ? "not found" : `cannot be read (${code ?? String(cause)})`;
    throw new ManifestError("READ_FAILED", `manifest ${why}: ${path}`, { file: display, cause });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) {
      throw new ManifestError("READ_FAILED", `manifest is not a regular file: ${path}`, { file: display });
    }
    if (stat.size > MAX_MANIFEST_BYTES) throw tooLarge(path, display);
    const buffer = Buffer.alloc(MAX_MANIFEST_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_MANIFEST_BYTES) throw tooLarge(path, display);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, length));
    } catch (cause) {
      throw new ManifestError("READ_FAILED", `manifest is not valid UTF-8: ${path}`, { file: display, cause });
    }
  } catch (cause) {
    if (ManifestError.is(cause)) throw cause;
    throw new ManifestError("READ_FAILED", `manifest cannot be read: ${path}`, { file: display, cause });
  } finally {
    await handle.close();
  }
}

function tooLarge(path: string, display: string): ManifestError {
  return new ManifestError("TOO_LARGE", `manifest is over the ${MAX_MANIFEST_BYTES}-byte limit: ${path}`, {
    file: display,
  });
}
