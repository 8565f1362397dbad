import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_PROMPTS_DIR } from "./builtin-prompts-dir.ts";

/*
 * The SHA-256 of each builtin prompt's text, computed by the build (scripts/copy-prompts.mjs
 * writes prompts/sha256.json next to the prompts), so that hashing the builtin instruction costs
 * a `pod run` nothing. Content-addressed like @insomnia/template's prebuilt ASTs: the key is the
 * whole text, so a digest is only ever taken for exactly the text it was computed from (an
 * edited copy of a builtin is hashed as any other text). A table that is missing or cannot be
 * read just means hashing.
 */

/** The file, inside the builtin prompts' directory. */
export const KNOWN_SHA256_FILE = "sha256.json";

let location: string | undefined = join(BUILTIN_PROMPTS_DIR, KNOWN_SHA256_FILE);
let table: ReadonlyMap<string, string> | undefined;

/** The SHA-256 the build recorded for exactly `text`, or undefined. */
export function knownSha256(text: string): string | undefined {
  table ??= readTable(location);
  return table.get(text);
}

/** Reads the table from `file` from now on (undefined: none); for tests. Not exported from the package. */
export function useKnownSha256File(file: string | undefined): void {
  location = file;
  table = undefined;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

function readTable(file: string | undefined): ReadonlyMap<string, string> {
  const known = new Map<string, string>();
  if (file === undefined) return known;
  let parsed: { prompts?: unknown };
  try {
    parsed = JSON.parse(readFileSync(file, "utf8")) as { prompts?: unknown };
  } catch {
    return known;
  }
  if (typeof parsed !== "object" || parsed === null || !Array.isArray(parsed.prompts)) return known;
  for (const entry of parsed.prompts as unknown[]) {
    const { text, sha256 } = (entry ?? {}) as { text?: unknown; sha256?: unknown };
    if (typeof text === "string" && typeof sha256 === "string" && HEX_SHA256.test(sha256)) known.set(text, sha256);
  }
  return known;
}
