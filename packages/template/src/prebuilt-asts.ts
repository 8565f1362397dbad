import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { HbsProgram } from "./handlebars-ast.ts";

/** The file the build writes next to the bundle (scripts/prebuild-asts.mjs). */
export const PREBUILT_ASTS_FILE = "prebuilt-asts.json";

/** Its content: the Handlebars release that parsed, and the AST of each builtin prompt by the sha256 of its text. */
export interface PrebuiltAsts {
  readonly handlebars: string;
  readonly asts: Readonly<Record<string, HbsProgram>>;
}

let location: URL | undefined = new URL(`./${PREBUILT_ASTS_FILE}`, import.meta.url);
let table: ReadonlyMap<string, HbsProgram> | undefined;

/**
 * The AST Handlebars.parse gives for a text with this sha256, when the build parsed that
 * text already (the builtin prompts), else undefined. A fresh copy every call: the checker
 * rewrites the AST it is given.
 *
 * Parsing needs Handlebars' parser, and loading it is about a tenth of a cold `pod prompt`;
 * with the builtin instruction prebuilt, such a run never loads it. Content-addressed, so
 * any file with the same text gets the same AST; used only when the installed handlebars is
 * the release that built the table, and a missing or unreadable table just means parsing.
 */
export function prebuiltAst(sha256: string): HbsProgram | undefined {
  table ??= readTable(location);
  const ast = table.get(sha256);
  return ast === undefined ? undefined : structuredClone(ast);
}

/** Reads the table from `file` from now on (undefined: no table); for tests. Not exported from the package. */
export function usePrebuiltAstsFile(file: URL | undefined): void {
  location = file;
  table = undefined;
}

function readTable(file: URL | undefined): ReadonlyMap<string, HbsProgram> {
  if (file === undefined) return new Map();
  let parsed: Partial<PrebuiltAsts>;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<PrebuiltAsts>;
  } catch {
    return new Map();
  }
  if (typeof parsed !== "object" || parsed === null || typeof parsed.asts !== "object" || parsed.asts === null) return new Map();
  if (parsed.handlebars !== installedHandlebarsVersion()) return new Map();
  return new Map(Object.entries(parsed.asts));
}

function installedHandlebarsVersion(): string | undefined {
  try {
    const pkg = createRequire(import.meta.url)("handlebars/package.json") as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}
