import type { PositionMap, SafeYamlResult } from "./safe-yaml.ts";

const KEY = /^[a-z][a-z0-9_-]*$/;
const TYPED = new Set(["true", "false", "null", "True", "False", "Null", "TRUE", "FALSE", "NULL"]);
const NOT_PLAIN_KEYS = new Set(["constructor", "prototype", ...TYPED]);
const COMMENT = /^ *#/;

/**
 * The YAML most manifests and SKILL.md frontmatters are — `key: value` lines, one level of
 * `  key: value` lines below a `key:` line, blank lines and whole-line comments — turned into
 * exactly what `parseSafeYaml` returns for it (value, positions, no issues), without loading
 * the yaml package (a good part of a cold `pod` start); undefined for anything else, which
 * `parseSafeYaml` then reads with the yaml package. Values are plain scalars that start with a
 * letter (never `true`/`false`/`null`), or quoted strings without escapes. A differential test
 * holds it to the full reader.
 */
export function parseSimpleYaml(text: string): SafeYamlResult | undefined {
  if (text === "" || !text.endsWith("\n")) return undefined;
  const value: Record<string, unknown> = {};
  // The lines that hold a key, with their offsets: blank and comment lines say nothing.
  const lines: { line: string; start: number }[] = [];
  let offset = 0;
  for (const line of text.slice(0, -1).split("\n")) {
    const start = offset;
    offset += line.length + 1;
    if (line === "") continue;
    if (COMMENT.test(line)) {
      if (!printable(line)) return undefined;
      continue;
    }
    lines.push({ line, start });
  }
  if (lines.length === 0) return undefined;
  // The root mapping starts at its first key.
  const positions: PositionMap = new Map();
  positions.set("", { value: lines[0]!.start });
  let nested: { key: string; map: Record<string, string> } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const { line, start } = lines[i]!;
    const inner = line.startsWith("  ");
    const body = inner ? line.slice(2) : line;
    const colon = body.indexOf(":");
    // yaml refuses an implicit key longer than 1024 characters.
    if (colon <= 0 || colon > 1024) return undefined;
    const key = body.slice(0, colon);
    if (!KEY.test(key) || NOT_PLAIN_KEYS.has(key)) return undefined;
    const keyOffset = start + (inner ? 2 : 0);
    const rest = body.slice(colon + 1);
    if (inner) {
      if (nested === undefined || Object.hasOwn(nested.map, key) || !rest.startsWith(" ")) return undefined;
      const scalar = scalarOf(rest.slice(1));
      if (scalar === undefined) return undefined;
      nested.map[key] = scalar;
      positions.set(`${nested.key}\u0000${key}`, { key: keyOffset, value: keyOffset + colon + 2 });
      continue;
    }
    if (nested !== undefined && Object.keys(nested.map).length === 0) return undefined;
    nested = undefined;
    if (Object.hasOwn(value, key)) return undefined;
    if (rest === "") {
      // A mapping below: its first key's line must come next.
      const next = lines[i + 1];
      if (next === undefined || !next.line.startsWith("  ")) return undefined;
      nested = { key, map: {} };
      value[key] = nested.map;
      positions.set(key, { key: keyOffset, value: next.start + 2 });
      continue;
    }
    if (!rest.startsWith(" ")) return undefined;
    const scalar = scalarOf(rest.slice(1));
    if (scalar === undefined) return undefined;
    value[key] = scalar;
    positions.set(key, { key: keyOffset, value: keyOffset + colon + 2 });
  }
  if (nested !== undefined && Object.keys(nested.map).length === 0) return undefined;
  return { value, positions, issues: [] };
}

/** The string a scalar stands for, or undefined when it is not in the simple subset. */
function scalarOf(source: string): string | undefined {
  if (!printable(source)) return undefined;
  const first = source.charCodeAt(0);
  if (first === 0x22 /* " */) {
    return /^"[^"\\]*"$/.test(source) ? source.slice(1, -1) : undefined;
  }
  if (first === 0x27 /* ' */) {
    return /^'[^']*'$/.test(source) ? source.slice(1, -1) : undefined;
  }
  if (!/^[A-Za-z]/.test(source) || TYPED.has(source)) return undefined;
  if (source.includes(": ") || source.endsWith(":") || source.includes(" #") || source.endsWith(" ")) return undefined;
  return source;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const PRINTABLE = /^[^\u0000-\u001f\u007f-\u009f\ufeff\u2028\u2029]+$/;

/** Not empty; no tabs, no control characters, no BOM or line separators: those go to the full reader. */
function printable(source: string): boolean {
  return PRINTABLE.test(source);
}
