import { errorText, isSameOrInside } from "@insomnia/errors";
import { constants } from "node:fs";
import { lstat, open, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import type { PodWarning } from "./pod-warning.ts";

/** Default cap on the AGENTS.md bytes put into a prompt: 64 KiB. */
export const AGENTS_MD_MAX_BYTES = 64 * 1024;

/** The file name looked for in the pod's working directory. */
export const AGENTS_MD_FILE = "AGENTS.md";

/** What {@link readAgentsMd} needs of a scope. */
export interface ReadableScope {
  isReadable(path: string): boolean;
}

/** Result of {@link readAgentsMd}; `text` is absent when there is nothing to inject. */
export interface AgentsMdResult {
  /** The text for the prompt: the file verbatim (BOM dropped), plus a notice when truncated. */
  text?: string;
  /** Real path of the file read (or looked at, for a warning). */
  file?: string;
  /** Bytes of the file that are in `text`. */
  bytes: number;
  /** Size of the file on disk. */
  totalBytes: number;
  truncated: boolean;
  warnings: PodWarning[];
}

/** The notice appended to a truncated AGENTS.md, visible to the model. */
export function truncationNotice(shownBytes: number, totalBytes: number): string {
  return `\n\n[AGENTS.md truncated: showing the first ${shownBytes} of ${totalBytes} bytes]\n`;
}

const absent = (warnings: PodWarning[] = [], file?: string): AgentsMdResult => ({
  ...(file === undefined ? {} : { file }),
  bytes: 0,
  totalBytes: 0,
  truncated: false,
  warnings,
});

/** Largest index <= `limit` that does not fall inside a UTF-8 sequence of `bytes`. */
export function utf8Boundary(bytes: Uint8Array, limit: number): number {
  let cut = Math.min(limit, bytes.length);
  // Back off over continuation bytes (10xxxxxx); at most 3 for valid UTF-8.
  while (cut > 0 && cut < bytes.length && ((bytes[cut] ?? 0) & 0xc0) === 0x80 && limit - cut < 3) cut--;
  return cut;
}

/**
 * Reads `<pwd>/AGENTS.md` under the rules of design.md: missing is silent; a real path
 * outside the workspace root (`options.root`, default `pwd`) or the readable scope, a
 * non-regular file, or bytes that are not UTF-8 are omitted with a warning; more than
 * `maxBytes` is cut at a UTF-8 boundary with a visible notice.
 */
export async function readAgentsMd(
  pwd: string,
  scope: ReadableScope,
  options: { maxBytes?: number; root?: string } = {},
): Promise<AgentsMdResult> {
  const maxBytes = options.maxBytes ?? AGENTS_MD_MAX_BYTES;
  const path = join(pwd, AGENTS_MD_FILE);

  try {
    await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return absent();
    return absent([unreadable(path, errorText(error))], path);
  }

  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    return absent([unreadable(path, `cannot resolve its real path (${errorText(error)})`)], path);
  }

  // Checked on the real path, against the workspace root where the pod runs (not a scope the
  // checkout wrote): a symlinked AGENTS.md must not pull in ~/.ssh/id_rsa.
  const root = await realpath(options.root ?? pwd).catch(() => options.root ?? pwd);
  const insideWorkspace = isSameOrInside(root, real);
  if (!insideWorkspace || !scope.isReadable(real)) {
    const inPlace = real === join(await realpath(pwd).catch(() => pwd), AGENTS_MD_FILE);
    return absent(
      [
        {
          code: "AGENTS_MD_OUTSIDE_SCOPE",
          // The file may be right there, in a directory the scope leaves out: then moving it is no answer.
          message: !insideWorkspace
            ? `${path} resolves to ${real}, which is outside the workspace ${root}; it was left out of the system prompt. Make AGENTS.md a file inside the workspace.`
            : inPlace
              ? `${path} is outside the pod's readable scope (the scope leaves out the pod's own directory); it was left out of the system prompt. Allow reading ${pwd} (a scope.allow rule) to include it.`
              : `${path} resolves to ${real}, which is outside the pod's readable scope; it was left out of the system prompt. Move the file into the pod's directory or allow reading its target.`,
          file: real,
        },
      ],
      real,
    );
  }

  let bytes: Uint8Array;
  let totalBytes: number;
  try {
    // stat first so a directory or FIFO is refused without opening it; O_NONBLOCK in case it was swapped since.
    if (!(await stat(real)).isFile()) return absent([unreadable(real, "it is not a regular file")], real);
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return absent([unreadable(real, "it is not a regular file")], real);
      totalBytes = info.size;
      // One byte past the cap tells whether the cut falls inside a code point.
      const want = Math.min(totalBytes, maxBytes + 1);
      const buffer = new Uint8Array(want);
      let filled = 0;
      while (filled < want) {
        const { bytesRead } = await handle.read(buffer, filled, want - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      bytes = buffer.subarray(0, filled);
      if (filled < want) totalBytes = filled;
    } finally {
      await handle.close();
    }
  } catch (error) {
    return absent([unreadable(real, errorText(error))], real);
  }

  const truncated = totalBytes > maxBytes;
  const shown = truncated ? utf8Boundary(bytes, maxBytes) : bytes.length;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, shown));
  } catch {
    return absent(
      [
        {
          code: "AGENTS_MD_NOT_UTF8",
          message: `${real} is not valid UTF-8; it was left out of the system prompt. Save it as UTF-8.`,
          file: real,
        },
      ],
      real,
    );
  }

  if (text.length === 0 && !truncated) return { ...absent([], real), totalBytes };
  const warnings: PodWarning[] = [];
  if (truncated) {
    text += truncationNotice(shown, totalBytes);
    warnings.push({
      code: "AGENTS_MD_TRUNCATED",
      message: `${real} is ${totalBytes} bytes; only the first ${shown} (cap ${maxBytes}) went into the system prompt, followed by a truncation notice. Shorten the file to keep all of it.`,
      file: real,
    });
  }
  return { text, file: real, bytes: shown, totalBytes, truncated, warnings };
}

function unreadable(file: string, reason: string): PodWarning {
  return {
    code: "AGENTS_MD_UNREADABLE",
    message: `${file} could not be read (${reason}); it was left out of the system prompt.`,
    file,
  };
}
