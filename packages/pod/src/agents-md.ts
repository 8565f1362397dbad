import { errorText } from "@insomnia/errors";
import { readTextInsideRoot, resolveRoot } from "@insomnia/safe-read";
import { realpath } from "node:fs/promises";
import { join } from "node:path";
import type { PodWarning } from "./pod-warning.ts";

/** Default cap on the AGENTS.md bytes put into a prompt: 64 KiB. */
export const AGENTS_MD_MAX_BYTES: number = 64 * 1024;

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
  // Checked on the real path, against the workspace root where the pod runs (not a scope the
  // checkout wrote): a symlinked AGENTS.md must not pull in ~/.ssh/id_rsa.
  // Resolved once, here: the read judges against this real path without resolving it again.
  const given = options.root ?? pwd;
  const resolved = resolveRoot(given);
  const root = resolved.ok ? resolved.value.real : given;
  const read = readTextInsideRoot(path, {
    root: resolved.ok ? resolved.value : given,
    maxBytes,
    overLimit: "cut",
    inside: "or-same",
    isReadable: (real) => scope.isReadable(real),
  });
  if (!read.ok) {
    switch (read.reason) {
      case "missing":
        if (!read.dangling && errnoOf(read.cause) === "ENOENT") return absent();
        return read.dangling
          ? absent([unreadable(path, `cannot resolve its real path (${errorText(read.cause)})`)], path)
          : absent([unreadable(path, errorText(read.cause))], path);
      case "unresolved":
        return absent([unreadable(path, `cannot resolve its real path (${errorText(read.cause)})`)], path);
      case "root-unresolved":
        return absent([unreadable(path, `cannot resolve the workspace ${root} (${errorText(read.cause)})`)], path);
      case "outside-root":
      case "outside-readable": {
        const { real } = read;
        const inPlace = real === join(await realpath(pwd).catch(() => pwd), AGENTS_MD_FILE);
        return absent(
          [
            {
              code: "AGENTS_MD_OUTSIDE_SCOPE",
              // The file may be right there, in a directory the scope leaves out: then moving it is no answer.
              message:
                read.reason === "outside-root"
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
      case "not-a-file":
      case "replaced":
        return absent([unreadable(read.file, "it is not a regular file")], read.file);
      case "open-failed":
      case "read-failed":
        return absent([unreadable(read.file, errorText(read.cause))], read.file);
      case "too-large":
        // Not reached: a file over the cap is cut.
        return absent([unreadable(read.file, "it is over the cap")], read.file);
      case "not-utf8":
        return absent(
          [
            {
              code: "AGENTS_MD_NOT_UTF8",
              message: `${read.file} is not valid UTF-8; it was left out of the system prompt. Save it as UTF-8.`,
              file: read.file,
            },
          ],
          read.file,
        );
    }
  }

  const { file: real, textBytes: shown, cut: truncated } = read.value;
  const totalBytes = truncated ? Math.max(read.value.size, maxBytes + 1) : read.value.bytes.length;
  let text = read.value.text;
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

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
