import type { Stats } from "node:fs";
import { type ResolvedRoot, readTextInsideRoot } from "@insomnia/safe-read";
import { SkillsError } from "./skills-error.ts";

/** Largest SKILL.md read: 1 MiB. */
export const MAX_SKILL_FILE_BYTES: number = 1024 * 1024;

/** Decides whether the pod may read a path (a real path); the pod passes its scope's `isReadable`. */
export type IsReadable = (path: string) => boolean;

/** Where a SKILL.md may be read from. */
export interface SkillFileRules {
  /**
   * Real path of the skill's root; the file's real path must be strictly inside it. A root
   * `resolveRoot` of @insomnia/safe-read resolved once is not resolved again for each file.
   */
  readonly rootDir: string | ResolvedRoot;
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

/** Reads `file` only if it is a regular file of at most 1 MiB whose real path stays inside `rootDir` (and is readable, when a check is given), in strict UTF-8. */
export function readSkillFile(file: string, rules: SkillFileRules): SkillFile {
  const maxBytes = rules.maxBytes ?? MAX_SKILL_FILE_BYTES;
  const read = readTextInsideRoot(file, { root: rules.rootDir, maxBytes, isReadable: rules.isReadable, decode: "lf" });
  const rootDir = typeof rules.rootDir === "string" ? rules.rootDir : rules.rootDir.real;
  if (read.ok) return { text: read.value.text, file: read.value.file, bytes: read.value.bytes.length };
  switch (read.reason) {
    case "root-unresolved":
      throw new SkillsError("SKILL_UNREADABLE", `cannot resolve ${read.root} (${errnoText(read.cause)})`, {
        file,
        cause: read.cause,
      });
    case "missing":
    case "unresolved": {
      // A SKILL.md that is not a symlink is read at its path: a missing one cannot be read; a link cannot be resolved.
      const verb = read.reason === "missing" && !read.dangling ? "read" : "resolve";
      throw new SkillsError("SKILL_UNREADABLE", `cannot ${verb} ${file} (${errnoText(read.cause)})`, {
        file,
        cause: read.cause,
      });
    }
    case "outside-root":
      throw new SkillsError(
        "SKILL_OUTSIDE_ROOT",
        `${file} resolves to ${read.real}, outside its skills directory ${rootDir}; a skill must stay inside its root (check symlinks)`,
        { file },
      );
    case "outside-readable":
      throw new SkillsError(
        "SKILL_OUTSIDE_SCOPE",
        `${file} resolves to ${read.real}, which is outside the pod's readable scope; move the skill or allow reading it`,
        { file },
      );
    case "not-a-file":
      throw new SkillsError(
        "SKILL_NOT_A_FILE",
        `${read.file} is ${kindOf(read.stats)}, not a regular file; a SKILL.md must be a file`,
        { file: read.file },
      );
    case "too-large": {
      const got = read.size === undefined ? "" : ` ${read.size} bytes,`;
      throw new SkillsError(
        "SKILL_TOO_LARGE",
        `${read.file} is${got} over the limit of ${maxBytes} bytes; move detail into files next to SKILL.md`,
        { file: read.file },
      );
    }
    case "open-failed":
      throw new SkillsError(
        "SKILL_UNREADABLE",
        `cannot ${read.stage === "open" ? "open" : "read"} ${read.file} (${errnoText(read.cause)})`,
        { file: read.file, cause: read.cause },
      );
    case "replaced":
      throw new SkillsError("SKILL_NOT_A_FILE", `${read.file} was replaced while being read; try again`, {
        file: read.file,
      });
    case "read-failed":
      throw new SkillsError("SKILL_UNREADABLE", `cannot read ${read.file} (${errnoText(read.cause)})`, {
        file: read.file,
        cause: read.cause,
      });
    case "not-utf8":
      throw new SkillsError(
        "SKILL_NOT_UTF8",
        `is not valid UTF-8 (first bad byte at offset ${read.byteOffset}); save it as UTF-8`,
        { file: read.file, line: read.line, column: read.column, cause: read.cause },
      );
  }
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
