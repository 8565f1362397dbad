import { checkLayerValue } from "./check-layer.ts";
import { MAX_MANIFEST_BYTES } from "./defaults.ts";
import { sortIssues, toManifestError } from "./issue.ts";
import type { Issue } from "./issue.ts";
import type { ManifestError } from "./manifest-error.ts";
import { parseSafeYaml } from "./safe-yaml.ts";
import type { ManifestLayerResult, PartialManifest } from "./types.ts";

/** Validates one YAML layer and reports every problem found; `file` is used in error positions. */
export function validateManifestLayer(text: string, file: string): ManifestLayerResult {
  const issues = layerIssues(text);
  if (Array.isArray(issues)) return { ok: false, issues: issues.map((issue) => toManifestError(issue, file, text)) };
  return { ok: true, value: issues.value };
}

/** Parses one YAML layer; throws the first ManifestError; `file` is used in error positions. */
export function parseManifestLayer(text: string, file: string): PartialManifest {
  const result = validateManifestLayer(text, file);
  if (!result.ok) throw result.issues[0] as ManifestError;
  return result.value;
}

function layerIssues(text: string): Issue[] | { value: PartialManifest } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_MANIFEST_BYTES) {
    return [{ code: "TOO_LARGE", detail: `manifest is ${bytes} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit` }];
  }
  const parsed = parseSafeYaml(text);
  const issues = [...parsed.issues];
  const root = parsed.positions.get("");
  if (parsed.value !== undefined && (parsed.value === null || typeof parsed.value !== "object" || Array.isArray(parsed.value))) {
    issues.push({
      code: "NOT_A_MAPPING",
      detail: `a manifest must be a mapping of keys (pod, worker, scope, provider), got ${Array.isArray(parsed.value) ? "a list" : "a single value"}`,
      ...(root === undefined ? { offset: 0 } : { offset: root.value }),
    });
    return sortIssues(issues);
  }
  const checked = checkLayerValue(parsed.value ?? {}, parsed.positions);
  issues.push(...checked.issues);
  if (issues.length > 0 || checked.value === undefined) return sortIssues(issues);
  return { value: checked.value };
}
