import { readFileSync } from "node:fs";
import handlebarsPackage from "handlebars/package.json" with { type: "json" };
import type { HbsProgram } from "./handlebars-ast.ts";

/** The file the build writes next to the bundle (scripts/prebuild-asts.mjs). */
const PREBUILT_ASTS_FILE = "prebuilt-asts.json";

/** Its content: the Handlebars release that parsed, and each builtin prompt's text (as loaded) with its AST. */
export interface PrebuiltAsts {
  readonly handlebars: string;
  readonly prompts: readonly { readonly text: string; readonly ast: HbsProgram }[];
}

let location: URL | undefined = new URL(`./${PREBUILT_ASTS_FILE}`, import.meta.url);
let table: ReadonlyMap<string, HbsProgram> | undefined;

/**
 * The AST Handlebars.parse gives for `text`, when the build parsed that text already (the
 * builtin prompts), else undefined. A fresh copy every call: the checker
 * rewrites the AST it is given.
 *
 * Parsing needs Handlebars' parser, and loading it adds to every process start; with the
 * builtin instruction prebuilt, a run that uses only the builtin never loads it. Content-addressed, so
 * any file with the same text gets the same AST (the text is the key: nothing to hash); used only when the installed handlebars is
 * the release that built the table, and a missing or unreadable table just means parsing.
 */
export function prebuiltAst(text: string): HbsProgram | undefined {
  table ??= readTable(location);
  const ast = table.get(text);
  return ast === undefined ? undefined : structuredClone(ast);
}

/** Whether prebuiltAst has an AST for `text` (without copying it). */
export function isPrebuilt(text: string): boolean {
  table ??= readTable(location);
  return table.has(text);
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
  if (typeof parsed !== "object" || parsed === null || !Array.isArray(parsed.prompts)) return new Map();
  if (parsed.handlebars !== installedHandlebarsVersion()) return new Map();
  const table = new Map<string, HbsProgram>();
  for (const prompt of parsed.prompts as unknown[]) {
    const { text, ast } = (prompt ?? {}) as { text?: unknown; ast?: { type?: unknown } };
    if (typeof text === "string" && ast?.type === "Program") table.set(text, ast as HbsProgram);
  }
  return table;
}

function installedHandlebarsVersion(): string | undefined {
  const { version } = handlebarsPackage as { version?: unknown };
  return typeof version === "string" ? version : undefined;
}
