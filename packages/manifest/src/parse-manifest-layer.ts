import { checkLayerValue } from "./check-layer.ts";
import { MAX_MANIFEST_BYTES } from "./defaults.ts";
import { lineLocator } from "@insomnia/safe-yaml";
import { sortIssues, toManifestError } from "./issue.ts";
import type { Issue } from "./issue.ts";
import { parseSafeYaml } from "@insomnia/safe-yaml";
import type { PositionMap } from "@insomnia/safe-yaml";
import type { ManifestLayerResult, PartialManifest } from "./types.ts";

/** A valid layer with the offsets of its nodes in `text` (internal: loadManifest turns them into origins). */
export interface PositionedLayer {
  value: PartialManifest;
  positions: PositionMap;
  text: string;
}

/** Validates one YAML layer and reports every problem found; `file` is used in error positions. */
export function validateManifestLayer(text: string, file: string): ManifestLayerResult {
  const source = withLineFeeds(text);
  const issues = layerIssues(source);
  if (Array.isArray(issues)) {
    const locate = lineLocator(source);
    return { ok: false, issues: issues.map((issue) => toManifestError(issue, file, source, locate)) };
  }
  return { ok: true, value: issues.value };
}

/** Parses one YAML layer; throws the first ManifestError; `file` is used in error positions. */
export function parseManifestLayer(text: string, file: string): PartialManifest {
  return parsePositionedLayer(text, file).value;
}

/** parseManifestLayer that also returns the node positions of the layer. */
export function parsePositionedLayer(text: string, file: string): PositionedLayer {
  const source = withLineFeeds(text);
  const issues = layerIssues(source);
  if (Array.isArray(issues)) throw toManifestError(issues[0]!, file, source);
  return { ...issues, text: source };
}

/**
 * YAML reads a lone CR as a line break, as editors show it; the yaml package does not.
 * Each lone CR becomes an LF: the same length, so every offset and every line and column
 * stays what the user sees. (A CR inside a quoted scalar is a line break in YAML too.)
 */
function withLineFeeds(text: string): string {
  return text.includes("\r") ? text.replace(/\r(?!\n)/g, "\n") : text;
}

function layerIssues(text: string): Issue[] | { value: PartialManifest; positions: PositionMap } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_MANIFEST_BYTES) {
    return [{ code: "TOO_LARGE", detail: `manifest is ${bytes} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit` }];
  }
  const parsed = parseSafeYaml(text);
  const issues: Issue[] = [...parsed.issues];
  const root = parsed.positions.get("");
  if (
    parsed.value !== undefined &&
    (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value))
  ) {
    issues.push({
      code: "NOT_A_MAPPING",
      detail: `a manifest must be a mapping of keys (pod, worker, scope, provider, skills), got ${Array.isArray(parsed.value) ? "a list" : "a single value"}`,
      ...(root === undefined ? { offset: 0 } : { offset: root.value }),
    });
    return sortIssues(issues);
  }
  const checked = checkLayerValue(parsed.value ?? {}, parsed.positions);
  issues.push(...checked.issues);
  if (issues.length > 0 || checked.value === undefined) return sortIssues(issues);
  return { value: checked.value, positions: parsed.positions };
}
