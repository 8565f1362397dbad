import { Composer, type Document, isAlias, isMap, isScalar, isSeq, type Node as YamlNode, Parser } from "yaml";
import { formatKey, pathKey } from "./yaml-path.ts";
import type { PathSegments } from "./yaml-path.ts";
import type { SafeYamlIssue as Issue } from "./safe-yaml-issue.ts";

/** The deepest nesting parsed; deeper input is one YAML_SYNTAX issue, never a stack overflow. */
export const MAX_YAML_DEPTH = 32;

/** Offsets of a key and its value inside the parsed text. */
export interface NodePosition {
  key?: number;
  value: number;
}

/** Positions of every converted node, by `pathKey` of its path ("" is the root). */
export type PositionMap = Map<string, NodePosition>;

/** A YAML text turned into plain data, with node positions and every problem found. */
export interface SafeYamlResult {
  /** The plain value; `undefined` for an empty stream, or when a fatal problem stopped conversion. */
  value: unknown;
  positions: PositionMap;
  issues: Issue[];
}

/** Keys that could reach Object.prototype in a consumer that merges naively. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

const COMPOSE_OPTIONS = {
  version: "1.2",
  schema: "core",
  merge: false,
  // yaml compares every key with every earlier key of its mapping, quadratic in the keys;
  // the Converter finds duplicates with a Set, and also sees 1 and "1" as one.
  uniqueKeys: false,
  strict: true,
  prettyErrors: false,
  logLevel: "silent",
  intAsBigInt: false,
} as const;

const SKIP = Symbol("skip");

/**
 * Parses YAML under the manifest's safe rules: one document, no anchors, aliases, tags,
 * directives, merge keys, duplicate or prototype keys. Never throws for any input (only when the
 * yaml package itself cannot be loaded), never logs.
 */
export function parseSafeYaml(text: string): SafeYamlResult {
  const positions: PositionMap = new Map();
  const issues: Issue[] = [];
  let documents: Document.Parsed[];
  try {
    const tokens = Array.from(new Parser().parse(text));
    // yaml's Composer recurses once per nesting level, and a stack overflow inside V8's
    // regexp compiler aborts the process; so measure the depth on the (iteratively built)
    // token tree first and never compose absurdly nested input.
    const { found, tooDeep } = scanTokens(tokens);
    issues.push(...found);
    if (tooDeep !== undefined) {
      issues.push(tooDeep);
      return { value: undefined, positions, issues };
    }
    const composer = new Composer(COMPOSE_OPTIONS);
    documents = Array.from(composer.compose(tokens));
    if (documents.length === 0) {
      const stream = composer.streamInfo();
      issues.push(...yamlProblems([...stream.errors, ...stream.warnings], issues));
    }
  } catch (cause) {
    // yaml recurses per nesting level; absurd nesting can exhaust the stack. Anything else (a
    // yaml package that cannot be loaded) is not a problem of the user's YAML.
    if (!(cause instanceof RangeError)) throw cause;
    issues.push({ code: "YAML_SYNTAX", detail: "YAML could not be parsed (nested too deeply?)", offset: 0, cause });
    return { value: undefined, positions, issues };
  }
  const [document, second] = documents;
  if (second !== undefined) {
    issues.push({
      code: "YAML_MULTIPLE_DOCUMENTS",
      detail: "a manifest is one YAML document; remove the second `---` and what follows, or merge it into the first",
      offset: second.range[0],
    });
  }
  for (const extra of documents.slice(1)) issues.push(...yamlProblems([...extra.errors, ...extra.warnings], issues));
  if (document === undefined) return { value: undefined, positions, issues };
  const problems = yamlProblems([...document.errors, ...document.warnings], issues);
  issues.push(...problems);
  if (problems.some((issue) => issue.code === "YAML_SYNTAX")) return { value: undefined, positions, issues };

  const contents = document.contents as YamlNode | null;
  if (contents === null || (isScalar(contents) && contents.value === null && !contents.source)) {
    return { value: undefined, positions, issues };
  }
  positions.set("", { value: start(contents) });
  const converter = new Converter(positions, issues);
  const value = converter.convert(contents, [], 0);
  return { value: value === SKIP ? undefined : value, positions, issues };
}

const COLLECTION_TOKENS: ReadonlySet<string> = new Set(["block-map", "block-seq", "flow-collection"]);

/**
 * Finds anchors, aliases, tags and directives anywhere in the CST, and the first collection
 * nested deeper than the manifest allows: one iterative walk (the CST can be deeper than the stack).
 */
function scanTokens(tokens: readonly unknown[]): { found: Issue[]; tooDeep: Issue | undefined } {
  const found: Issue[] = [];
  let tooDeep: Issue | undefined;
  // Two parallel stacks: what to visit, and the collection depth it sits at.
  const items: unknown[] = [...tokens];
  const depths: number[] = tokens.map(() => 0);
  while (items.length > 0) {
    const item = items.pop();
    const depth = depths.pop() ?? 0;
    if (item === null || typeof item !== "object") continue;
    const token = item as { type?: unknown; offset?: unknown; source?: unknown };
    if (typeof token.offset === "number" && typeof token.source === "string") {
      const issue = tokenIssue(String(token.type), token.source, token.offset);
      if (issue !== undefined) found.push(issue);
    }
    const inner = typeof token.type === "string" && COLLECTION_TOKENS.has(token.type) ? depth + 1 : depth;
    if (inner > MAX_YAML_DEPTH && tooDeep === undefined) {
      tooDeep = {
        code: "YAML_SYNTAX",
        detail: `the YAML is nested more than ${MAX_YAML_DEPTH} levels deep; a manifest needs at most a few`,
        offset: typeof token.offset === "number" ? token.offset : 0,
      };
    }
    // CST tokens and arrays are plain: `for…in` sees what Object.values would, without an array per node.
    for (const key in item) {
      const child = (item as Record<string, unknown>)[key];
      if (child !== null && typeof child === "object") {
        items.push(child);
        depths.push(inner);
      }
    }
  }
  return { found, tooDeep };
}

function tokenIssue(type: string, source: string, offset: number): Issue | undefined {
  switch (type) {
    case "anchor":
      return {
        code: "YAML_ALIAS",
        detail: `YAML anchor ${source} is not allowed in a manifest; write the value out in full`,
        offset,
      };
    case "alias":
      return {
        code: "YAML_ALIAS",
        detail: `YAML alias ${source} is not allowed in a manifest; write the value out in full`,
        offset,
      };
    case "tag":
      return {
        code: "YAML_TAG",
        detail: `YAML tag ${source} is not allowed in a manifest (no explicit tags, not even !!str); remove it and quote the value if it must be a string`,
        offset,
      };
    case "directive":
      return {
        code: "YAML_DIRECTIVE",
        detail: `YAML directive ${source.trim()} is not allowed in a manifest; manifests are always YAML 1.2, remove the line`,
        offset,
      };
    default:
      return undefined;
  }
}

interface YamlProblem {
  code: string;
  message: string;
  pos: [number, number];
}

/** Maps yaml's errors and warnings to issues, skipping those already reported from tokens. */
function yamlProblems(problems: readonly YamlProblem[], reported: readonly Issue[]): Issue[] {
  const hasTagIssue = reported.some((issue) => issue.code === "YAML_TAG" || issue.code === "YAML_DIRECTIVE");
  const hasAliasIssue = reported.some((issue) => issue.code === "YAML_ALIAS");
  const out: Issue[] = [];
  for (const problem of problems) {
    // Duplicate keys are found by the converter, which also sees "1" and 1 as the same key.
    if (problem.code === "DUPLICATE_KEY") continue;
    if (hasTagIssue && (problem.code === "TAG_RESOLVE_FAILED" || problem.code === "BAD_DIRECTIVE")) continue;
    if (hasAliasIssue && problem.code === "BAD_ALIAS") continue;
    out.push({ code: "YAML_SYNTAX", detail: `YAML syntax: ${firstLine(problem.message)}`, offset: problem.pos[0] });
  }
  return out;
}

function firstLine(message: string): string {
  const line = message.split("\n", 1)[0] ?? message;
  return line.replace(/ at line \d+, column \d+:?$/, "");
}

class Converter {
  constructor(
    private readonly positions: PositionMap,
    private readonly issues: Issue[],
  ) {}

  convert(node: YamlNode, path: PathSegments, depth: number): unknown {
    if (depth > MAX_YAML_DEPTH) {
      this.issues.push({
        code: "INVALID_VALUE",
        detail: `${formatKey(path) || "value"} is nested more than ${MAX_YAML_DEPTH} levels deep`,
        offset: start(node),
        key: formatKey(path),
      });
      return SKIP;
    }
    if (isAlias(node)) return SKIP;
    if (isScalar(node)) return node.value;
    if (isSeq(node)) {
      const out: unknown[] = [];
      node.items.forEach((entry, index) => {
        const item = (entry ?? null) as YamlNode | null;
        const itemPath = [...path, index];
        const value = this.convertChild(item, itemPath, depth, start(node));
        this.positions.set(pathKey(itemPath), { value: item === null ? start(node) : startOr(item, start(node)) });
        if (value !== SKIP) out.push(value);
      });
      return out;
    }
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      for (const pair of node.items) {
        const keyNode = pair.key as YamlNode | null;
        const keyOffset = keyNode === null ? start(node) : startOr(keyNode, start(node));
        const key = this.keyOf(keyNode, path, keyOffset);
        if (key === undefined) continue;
        const keyPath = [...path, key];
        if (seen.has(key)) {
          this.issues.push({
            code: "YAML_DUPLICATE_KEY",
            detail: `duplicate key "${key}"${inWhere(path)}; keep one of them`,
            offset: keyOffset,
            key: formatKey(keyPath),
          });
          continue;
        }
        seen.add(key);
        const valueNode = pair.value as YamlNode | null;
        const valueOffset = valueNode === null ? keyOffset : startOr(valueNode, keyOffset);
        this.positions.set(pathKey(keyPath), { key: keyOffset, value: valueOffset });
        const value = this.convertChild(valueNode, keyPath, depth, keyOffset);
        if (value !== SKIP) out[key] = value;
      }
      return out;
    }
    this.issues.push({
      code: "YAML_SYNTAX",
      detail: "unsupported YAML node",
      offset: start(node),
      key: formatKey(path),
    });
    return SKIP;
  }

  private convertChild(node: YamlNode | null, path: PathSegments, depth: number, fallback: number): unknown {
    if (node === null) return null;
    if (isScalar(node) || isMap(node) || isSeq(node) || isAlias(node)) return this.convert(node, path, depth + 1);
    // A bare pair inside a flow sequence (`[a: 1]`) is a one-entry mapping.
    this.issues.push({
      code: "INVALID_VALUE",
      detail: `${formatKey(path)} holds a key/value pair where a value was expected; wrap it in { }`,
      offset: fallback,
      key: formatKey(path),
    });
    return SKIP;
  }

  private keyOf(keyNode: YamlNode | null, path: PathSegments, offset: number): string | undefined {
    if (keyNode !== null && !isScalar(keyNode)) {
      if (!isAlias(keyNode)) {
        this.issues.push({
          code: "INVALID_VALUE",
          detail: `keys must be plain strings${inWhere(path)}, not a ${isSeq(keyNode) ? "sequence" : "mapping"}`,
          offset,
          key: formatKey(path),
        });
      }
      return undefined;
    }
    const key =
      keyNode === null
        ? ""
        : typeof keyNode.value === "string"
          ? keyNode.value
          : (keyNode.source ?? String(keyNode.value));
    if (key === "<<" && keyNode?.type === "PLAIN") {
      this.issues.push({
        code: "YAML_MERGE_KEY",
        detail: `YAML merge key << is not allowed${inWhere(path)}; write the keys out in full`,
        offset,
        key: formatKey([...path, key]),
      });
      return undefined;
    }
    if (FORBIDDEN_KEYS.has(key)) {
      this.issues.push({
        code: "FORBIDDEN_KEY",
        detail: `key "${key}" is forbidden${inWhere(path)}; remove it`,
        offset,
        key: formatKey([...path, key]),
      });
      return undefined;
    }
    return key;
  }
}

function inWhere(path: PathSegments): string {
  return path.length === 0 ? " at the top level" : ` in ${formatKey(path)}`;
}

function start(node: YamlNode): number {
  return node.range?.[0] ?? 0;
}

function startOr(node: YamlNode, fallback: number): number {
  return node.range?.[0] ?? fallback;
}
