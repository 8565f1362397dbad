import type { PositionMap, SafeYamlResult } from "@insomnia/manifest";

const KEY = /^[a-z][a-z0-9_-]*$/;
const TYPED = new Set(["true", "false", "null", "True", "False", "Null", "TRUE", "FALSE", "NULL"]);
const NOT_PLAIN_KEYS = new Set(["constructor", "prototype", ...TYPED]);

/**
 * The frontmatter most SKILL.md files have — `key: value` lines, and one level of
 * `  key: value` lines below a `key:` line — turned into exactly what `parseSafeYaml` of
 * @insomnia/manifest returns for it (value, positions, no issues), without loading the yaml
 * package; undefined for anything else, which then goes to `parseSafeYaml`. Values are
 * plain scalars that start with a letter (never `true`/`false`/`null`), or quoted strings
 * without escapes. A differential test holds it to `parseSafeYaml`'s result.
 */
export function parseSimpleFrontmatter(text: string): SafeYamlResult | undefined {
  if (text === "" || !text.endsWith("\n")) return undefined;
  const value: Record<string, unknown> = {};
  const positions: PositionMap = new Map();
  positions.set("", { value: 0 });
  let nested: { key: string; map: Record<string, string> } | undefined;
  let offset = 0;
  const lines = text.slice(0, -1).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const lineStart = offset;
    offset += line.length + 1;
    const inner = line.startsWith("  ");
    const body = inner ? line.slice(2) : line;
    const colon = body.indexOf(":");
    if (colon <= 0) return undefined;
    const key = body.slice(0, colon);
    if (!KEY.test(key) || NOT_PLAIN_KEYS.has(key)) return undefined;
    const keyOffset = lineStart + (inner ? 2 : 0);
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
      // A mapping below: its first line must follow.
      if (!(lines[i + 1] ?? "").startsWith("  ")) return undefined;
      nested = { key, map: {} };
      value[key] = nested.map;
      positions.set(key, { key: keyOffset, value: offset + 2 });
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

/** Not empty; no tabs, no control characters, no BOM or line separators: those go to the full parser. */
function printable(source: string): boolean {
  return PRINTABLE.test(source);
}
