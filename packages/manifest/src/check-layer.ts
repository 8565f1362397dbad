import { formatKey, pathKey, type PathSegments } from "@insomnia/safe-yaml";
import { MAX_REPORTED_ISSUES } from "./issue.ts";
import type { Issue } from "./issue.ts";
import type { PositionMap } from "@insomnia/safe-yaml";
import * as v from "valibot";
import { didYouMean } from "@insomnia/errors";
import { WORKER_TOOL_NAMES } from "./defaults.ts";
import { knownKeysAt, layerSchema, TOOL_NAME_PHRASE } from "./schema.ts";
import type { PartialManifest } from "./types.ts";

/** Message for a manifest that still carries the removed `worker.system_prompt`. */
export const SYSTEM_PROMPT_MOVED_DETAIL =
  'worker.system_prompt is no longer supported: move the template text into .insomnia/prompts/<name>.md and set worker.instruction: "$workspace/<name>" (files.agents_md is gone as well: AGENTS.md is appended to the prompt automatically)';

/** Validates converted YAML against the layer schema; issues point at YAML nodes via `positions`. */
export function checkLayerValue(
  value: unknown,
  positions: PositionMap,
): { value: PartialManifest; issues: [] } | { value: undefined; issues: Issue[] } {
  // valibot's object schemas accept arrays (as objects with no keys), so `worker: []`
  // would pass as an empty section: reject lists where mappings belong first.
  const misplaced = listsWhereMappingsBelong(value, [], positions);
  const result = v.safeParse(layerSchema(), value, { abortEarly: false, abortPipeEarly: true });
  if (result.success) {
    return misplaced.length > 0
      ? { value: undefined, issues: misplaced }
      : { value: result.output as PartialManifest, issues: [] };
  }
  const issues: Issue[] = [...misplaced];
  const doneParents = new Set<string>();
  for (const issue of result.issues) {
    const segments: (string | number)[] = (issue.path ?? []).map((item) => item.key as string | number);
    const last = issue.path?.at(-1);
    if (issue.type === "strict_object" && last !== undefined && last.origin === "key") {
      const parent = segments.slice(0, -1);
      if (issue.expected === "never") {
        if (doneParents.has(pathKey(parent))) continue;
        doneParents.add(pathKey(parent));
        issues.push(...unknownKeyIssues(last.input, parent, positions));
      } else {
        const key = String(last.key);
        issues.push({
          code: "INVALID_VALUE",
          detail: `${formatKey(parent)} is missing "${key}" (expected ${issue.message})`,
          offset: positionOf(positions, parent, "value"),
          key: formatKey(segments),
        });
      }
      continue;
    }
    if (issue.message === TOOL_NAME_PHRASE && typeof issue.input === "string") {
      issues.push(unknownToolIssue(issue.input, segments, positions));
      continue;
    }
    issues.push({
      code: "INVALID_VALUE",
      detail: `${formatKey(segments) || "the manifest"} must be ${issue.message}, got ${describe(issue.input)}`,
      offset: positionOf(positions, segments, "value"),
      key: formatKey(segments),
    });
  }
  return { value: undefined, issues };
}

/** `worker.tools[1]: unknown tool "read_fle" (did you mean "read_file"?)`. */
function unknownToolIssue(name: string, segments: PathSegments, positions: PositionMap): Issue {
  const suggestion = didYouMean(name, WORKER_TOOL_NAMES);
  const hint = suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`;
  return {
    code: "INVALID_VALUE",
    detail: `${formatKey(segments)} is ${describe(name)}, not a tool${hint}; the tools are ${WORKER_TOOL_NAMES.join(", ")} (write [] for none)`,
    offset: positionOf(positions, segments, "value"),
    key: formatKey(segments),
    ...(suggestion === undefined ? {} : { suggestion }),
  };
}

/** Every list in the layer at a place where the schema wants a mapping. */
function listsWhereMappingsBelong(value: unknown, path: PathSegments, positions: PositionMap): Issue[] {
  if (value === null || typeof value !== "object") return [];
  const mapping = knownKeysAt(path) !== undefined;
  if (Array.isArray(value)) {
    if (mapping) {
      return [
        {
          code: "INVALID_VALUE",
          detail: `${formatKey(path) || "the manifest"} must be a mapping, got a list`,
          offset: positionOf(positions, path, "value"),
          key: formatKey(path),
        },
      ];
    }
    return value.flatMap((item, index) => listsWhereMappingsBelong(item, [...path, index], positions));
  }
  if (!mapping) return [];
  return Object.entries(value).flatMap(([key, item]) => listsWhereMappingsBelong(item, [...path, key], positions));
}

function unknownKeyIssues(input: unknown, parent: PathSegments, positions: PositionMap): Issue[] {
  if (Array.isArray(input)) {
    return [
      {
        code: "INVALID_VALUE",
        detail: `${formatKey(parent) || "the manifest"} must be a mapping, got a list`,
        offset: positionOf(positions, parent, "value"),
        key: formatKey(parent),
      },
    ];
  }
  const known = knownKeysAt(parent) ?? [];
  // Only the first MAX_REPORTED_ISSUES unknown keys in the file's order are reported, so
  // only those get a did-you-mean (Object.keys puts integer-like keys first: sort by offset).
  const unknown: { key: string; offset: number | undefined }[] = [];
  for (const key of Object.keys(input as object)) {
    if (!known.includes(key)) unknown.push({ key, offset: positionOf(positions, [...parent, key], "key") });
  }
  unknown.sort((a, b) => (a.offset ?? Infinity) - (b.offset ?? Infinity));
  return unknown.slice(0, MAX_REPORTED_ISSUES).map(({ key, offset }) => unknownKeyIssue(key, parent, known, offset));
}

/** The issue for `key` not being one of `known` in the mapping at `parent`. */
export function unknownKeyIssue(
  key: string,
  parent: PathSegments,
  known: readonly string[],
  offset: number | undefined,
): Issue {
  const dotted = formatKey([...parent, key]);
  const base = { offset, key: dotted };
  if (formatKey(parent) === "worker" && key === "system_prompt") {
    return { ...base, code: "SYSTEM_PROMPT_MOVED", detail: SYSTEM_PROMPT_MOVED_DETAIL };
  }
  const where = parent.length === 0 ? "at the top level" : `in ${formatKey(parent)}`;
  if (parent.length === 0 && key === "files") {
    return {
      ...base,
      code: "UNKNOWN_KEY",
      detail: `unknown key "files" ${where}: files.agents_md is gone, AGENTS.md is appended to the prompt automatically; remove the block`,
    };
  }
  const suggestion = didYouMean(key, known) ?? (parent.length === 0 ? suggestNested(key) : undefined);
  const hint = suggestion === undefined ? ` (known keys: ${known.join(", ")})` : ` (did you mean "${suggestion}"?)`;
  return {
    ...base,
    code: "UNKNOWN_KEY",
    detail: `unknown key "${key}" ${where}${hint}`,
    ...(suggestion === undefined ? {} : { suggestion }),
  };
}

/** A top-level key that belongs one level down, e.g. `instruction` → `worker.instruction`. */
function suggestNested(key: string): string | undefined {
  for (const section of knownKeysAt([]) ?? []) {
    const match = didYouMean(key, knownKeysAt([section]) ?? []);
    if (match !== undefined) return `${section}.${match}`;
  }
  return undefined;
}

/** Offset of the node at `segments`, falling back to the nearest ancestor that has one. */
export function positionOf(positions: PositionMap, segments: PathSegments, part: "key" | "value"): number | undefined {
  const own = positions.get(pathKey(segments));
  if (own !== undefined) return part === "key" ? (own.key ?? own.value) : own.value;
  for (let length = segments.length - 1; length >= 0; length -= 1) {
    const ancestor = positions.get(pathKey(segments.slice(0, length)));
    if (ancestor !== undefined) return ancestor.value;
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return "null (an empty value)";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}
