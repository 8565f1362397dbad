import { checkLayerValue, unknownKeyIssue } from "./check-layer.ts";
import { MAX_MANIFEST_BYTES } from "./defaults.ts";
import { formatKey, pathKey } from "@insomnia/safe-yaml";
import { sortIssues, toManifestError } from "./issue.ts";
import type { Issue } from "./issue.ts";
import type { PositionedLayer } from "./parse-manifest-layer.ts";
import { FORBIDDEN_KEYS, parseSafeYaml } from "@insomnia/safe-yaml";
import type { PositionMap } from "@insomnia/safe-yaml";
import { knownKeysAt } from "./schema.ts";
import type { ManifestLayerResult, PartialManifest } from "./types.ts";

/** Codes that describe the key rather than the value; they are kept as is in an overlay. */
const KEY_CODES = new Set(["UNKNOWN_KEY", "FORBIDDEN_KEY", "SYSTEM_PROMPT_MOVED"]);

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Validates one overlay expression (`worker.max_turns = 10`) and reports every problem found. */
export function validateOverlay(expression: string, file = "--overlay"): ManifestLayerResult {
  const result = overlayIssues(expression);
  if (Array.isArray(result)) {
    return { ok: false, issues: sortIssues(result).map((issue) => toManifestError(issue, file, expression)) };
  }
  return { ok: true, value: result.value };
}

/** Parses one overlay expression into a partial layer; throws the first ManifestError. */
export function parseOverlay(expression: string, file = "--overlay"): PartialManifest {
  return parsePositionedOverlay(expression, file).value;
}

/** parseOverlay that also returns the node positions, as offsets into `expression`. */
export function parsePositionedOverlay(expression: string, file = "--overlay"): PositionedLayer {
  const result = overlayIssues(expression);
  if (Array.isArray(result)) throw toManifestError(sortIssues(result)[0]!, file, expression);
  return { ...result, text: expression };
}

function overlayIssues(expression: string): Issue[] | { value: PartialManifest; positions: PositionMap } {
  if (Buffer.byteLength(expression, "utf8") > MAX_MANIFEST_BYTES) {
    return [{ code: "TOO_LARGE", detail: `overlay is over the ${MAX_MANIFEST_BYTES}-byte limit` }];
  }
  const equals = expression.indexOf("=");
  if (equals === -1) {
    return [invalid('expected "<key> = <value>", e.g. worker.max_turns = 10; there is no "="', expression.length)];
  }
  const keyText = expression.slice(0, equals);
  const keyStart = keyText.length - keyText.trimStart().length;
  const key = keyText.trim();
  if (key === "") return [invalid('the key before "=" is empty; write e.g. worker.max_turns = 10', keyStart)];

  const segments: string[] = [];
  const offsets: number[] = [];
  let offset = keyStart;
  let scan = keyStart;
  for (const segment of key.split(".")) {
    if (!SEGMENT.test(segment)) {
      const what = segment === "" ? "an empty part" : `"${segment}"`;
      return [invalid(`the key "${key}" has ${what}; keys are dotted names such as worker.max_turns`, scan)];
    }
    scan += segment.length + 1;
  }
  for (const segment of key.split(".")) {
    if (FORBIDDEN_KEYS.has(segment)) {
      return [
        {
          code: "FORBIDDEN_KEY",
          detail: `key "${segment}" is forbidden`,
          offset,
          key: formatKey([...segments, segment]),
        },
      ];
    }
    const known = knownKeysAt(segments);
    if (known === undefined) {
      return [
        {
          code: "UNKNOWN_KEY",
          detail: `unknown key "${segment}": ${formatKey(segments)} is a value, not a mapping`,
          offset,
          key: formatKey([...segments, segment]),
        },
      ];
    }
    if (!known.includes(segment)) return [unknownKeyIssue(segment, segments, known, offset)];
    segments.push(segment);
    offsets.push(offset);
    offset += segment.length + 1;
  }

  const valueStart = equals + 1;
  const valueText = expression.slice(valueStart);
  if (valueText.trim() === "") return [invalid(`${key} has no value after "="`, valueStart)];
  const parsed = parseSafeYaml(valueText);
  const issues: Issue[] = parsed.issues.map((issue) => shiftIssue(issue, valueStart, segments));
  if (issues.length > 0) return issues.map(asOverlayIssue);

  let value: unknown = parsed.value;
  for (let i = segments.length - 1; i >= 0; i -= 1) value = { [segments[i]!]: value };
  const positions: PositionMap = new Map();
  segments.forEach((_, i) => {
    const path = segments.slice(0, i + 1);
    const root = i === segments.length - 1 ? parsed.positions.get("") : undefined;
    positions.set(pathKey(path), {
      key: offsets[i]!,
      value: root === undefined ? offsets[i]! : root.value + valueStart,
    });
  });
  const prefix = pathKey(segments);
  for (const [path, position] of parsed.positions) {
    if (path === "") continue;
    positions.set(`${prefix}\u0000${path}`, {
      ...(position.key === undefined ? {} : { key: position.key + valueStart }),
      value: position.value + valueStart,
    });
  }
  const checked = checkLayerValue(value, positions);
  if (checked.value === undefined) return checked.issues.map(asOverlayIssue);
  return { value: checked.value, positions };
}

function invalid(detail: string, offset: number): Issue {
  return { code: "INVALID_OVERLAY", detail, offset };
}

function shiftIssue(issue: Issue, by: number, segments: readonly string[]): Issue {
  const inner = issue.key ?? "";
  const key = inner === "" ? formatKey(segments) : `${formatKey(segments)}${inner.startsWith("[") ? "" : "."}${inner}`;
  return { ...issue, key, ...(issue.offset === undefined ? {} : { offset: issue.offset + by }) };
}

/** Value problems become INVALID_OVERLAY (the original issue kept as cause); key problems keep their code. */
function asOverlayIssue(issue: Issue): Issue {
  if (KEY_CODES.has(issue.code) || issue.code === "INVALID_OVERLAY") return issue;
  return { ...issue, code: "INVALID_OVERLAY", original: issue };
}
