import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import type { MockInstance } from "vitest";
import { parse as plainYamlParse } from "yaml";
import { ManifestError } from "./manifest-error.ts";
import type { ManifestErrorCode } from "./manifest-error.ts";
import { parseManifestLayer, validateManifestLayer } from "./parse-manifest-layer.ts";
import { validateOverlay } from "./parse-overlay.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

const CODES: readonly ManifestErrorCode[] = [
  "YAML_SYNTAX",
  "YAML_ALIAS",
  "YAML_MERGE_KEY",
  "YAML_TAG",
  "YAML_DIRECTIVE",
  "YAML_DUPLICATE_KEY",
  "YAML_MULTIPLE_DOCUMENTS",
  "FORBIDDEN_KEY",
  "UNKNOWN_KEY",
  "INVALID_VALUE",
  "SYSTEM_PROMPT_MOVED",
  "INVALID_OVERLAY",
  "READ_FAILED",
  "NOT_A_MAPPING",
  "TOO_LARGE",
];

const WORKER_KEYS = ["instruction", "max_tokens", "max_turns", "temperature"];

type Defect =
  | { kind: "alias" }
  | { kind: "anchor_only" }
  | { kind: "tag"; tag: string }
  | { kind: "duplicate" }
  | { kind: "wrong_type"; value: string }
  | { kind: "second_document" }
  | { kind: "forbidden"; key: string }
  | { kind: "unknown"; key: string }
  | { kind: "merge_key" }
  | { kind: "system_prompt" };

const defect: fc.Arbitrary<Defect> = fc.oneof(
  fc.constant<Defect>({ kind: "alias" }),
  fc.constant<Defect>({ kind: "anchor_only" }),
  fc
    .constantFrom("!!str", "!foo", "!!js/function", "!!int", "!", "!<tag:yaml.org,2002:int>", "!!binary")
    .map((tag): Defect => ({ kind: "tag", tag })),
  fc.constant<Defect>({ kind: "duplicate" }),
  fc
    .constantFrom('"many"', "-3", "0", "1.5", "true", "[1]", "{a: 1}", "null", "~", ".inf", ".nan", "''", "1e400")
    .map((value): Defect => ({ kind: "wrong_type", value })),
  fc.constant<Defect>({ kind: "second_document" }),
  fc.constantFrom("__proto__", "constructor", "prototype").map((key): Defect => ({ kind: "forbidden", key })),
  fc
    .stringMatching(/^[a-z][a-z_]{0,11}$/)
    .filter((key) => !WORKER_KEYS.includes(key) && key !== "system_prompt")
    .map((key): Defect => ({ kind: "unknown", key })),
  fc.constant<Defect>({ kind: "merge_key" }),
  fc.constant<Defect>({ kind: "system_prompt" }),
);

interface Model {
  name: string;
  maxTokens: number;
  maxTurns: number;
  temperature: number;
  target: string;
  recursive: boolean | undefined;
}

const model: fc.Arbitrary<Model> = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
  maxTokens: fc.integer({ min: 1, max: 1_000_000 }),
  maxTurns: fc.integer({ min: 1, max: 500 }),
  temperature: fc.integer({ min: 0, max: 200 }).map((n) => n / 100),
  target: fc.stringMatching(/^\/[a-z0-9_./-]{0,20}$/),
  recursive: fc.option(fc.boolean(), { nil: undefined }),
});

function render(m: Model, defects: readonly Defect[]): string {
  const worker = [
    `  instruction: "$user/x"`,
    `  max_tokens: ${m.maxTokens}`,
    `  max_turns: ${m.maxTurns}`,
    `  temperature: ${m.temperature}`,
  ];
  const tail: string[] = [];
  for (const d of defects) {
    switch (d.kind) {
      case "alias":
        worker[1] = `  max_tokens: &n ${m.maxTokens}`;
        worker[2] = "  max_turns: *n";
        break;
      case "anchor_only":
        worker[3] = `  temperature: &t ${m.temperature}`;
        break;
      case "tag":
        worker[1] = `  max_tokens: ${d.tag} ${m.maxTokens}`;
        break;
      case "duplicate":
        worker.push(`  max_turns: ${m.maxTurns}`);
        break;
      case "wrong_type":
        worker[2] = `  max_turns: ${d.value}`;
        break;
      case "second_document":
        tail.push("---", "pod: {}");
        break;
      case "forbidden":
        worker.push(`  ${d.key}: 1`);
        break;
      case "unknown":
        worker.push(`  ${d.key}: 1`);
        break;
      case "merge_key":
        worker.push("  <<: {max_turns: 1}");
        break;
      case "system_prompt":
        worker.push('  system_prompt: "hello"');
        break;
    }
  }
  const rule = [`    - target: "${m.target}"`, "      permission: read"];
  if (m.recursive !== undefined) rule.push(`      recursive: ${m.recursive}`);
  return ["pod:", `  name: ${m.name}`, "worker:", ...worker, "scope:", "  allow:", ...rule, ...tail, ""].join("\n");
}

const yamlish = fc
  .array(
    fc.constantFrom(
      "pod",
      "worker",
      "scope",
      "allow",
      "deny",
      "max_turns",
      "instruction",
      "target",
      "permission",
      "read",
      ":",
      ": ",
      " ",
      "\n",
      "  ",
      "- ",
      "&a ",
      "*a",
      "!!str ",
      "!x ",
      "<<",
      "---\n",
      "...\n",
      '"',
      "'",
      "{",
      "}",
      "[",
      "]",
      ", ",
      "1",
      "-1",
      "true",
      "null",
      "__proto__",
      "/tmp",
      "# c",
      "%YAML 1.2\n",
      "? ",
      "|\n",
      ">\n",
      "\t",
      "\\",
      "\u00e9",
      "\uFEFF",
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(""));

let stderrWrite: MockInstance;
let emitWarning: MockInstance;
let consoleWarn: MockInstance;

beforeAll(() => {
  stderrWrite = vi.spyOn(process.stderr, "write");
  emitWarning = vi.spyOn(process, "emitWarning");
  consoleWarn = vi.spyOn(console, "warn");
});

afterAll(() => {
  expect(stderrWrite.mock.calls).toEqual([]);
  expect(emitWarning.mock.calls).toEqual([]);
  expect(consoleWarn.mock.calls).toEqual([]);
  vi.restoreAllMocks();
});

function expectWellFormed(issues: readonly unknown[], text: string): void {
  expect(issues.length).toBeGreaterThan(0);
  const lines = text.split("\n").length;
  for (const issue of issues) {
    expect(issue).toBeInstanceOf(ManifestError);
    const error = issue as ManifestError;
    expect(CODES).toContain(error.code);
    if (error.line !== undefined) {
      expect(error.line).toBeGreaterThanOrEqual(1);
      expect(error.line).toBeLessThanOrEqual(lines);
      expect(error.column).toBeGreaterThanOrEqual(1);
    }
  }
}

describe("generated manifests", () => {
  test("manifests_without_defects_are_accepted_with_their_values", () => {
    fc.assert(
      fc.property(model, (m) => {
        const value = parseManifestLayer(render(m, []), "gen.yaml");
        expect(value).toEqual({
          pod: { name: m.name },
          worker: {
            instruction: "$user/x",
            max_tokens: m.maxTokens,
            max_turns: m.maxTurns,
            temperature: m.temperature,
          },
          scope: {
            allow: [
              {
                target: m.target,
                permission: "read",
                ...(m.recursive === undefined ? {} : { recursive: m.recursive }),
              },
            ],
          },
        });
      }),
      { numRuns: propertyRuns(50, 200) },
    );
  });

  test("manifests_with_defects_are_never_accepted", () => {
    fc.assert(
      fc.property(model, fc.array(defect, { minLength: 1, maxLength: 3 }), (m, defects) => {
        const text = render(m, defects);
        const result = validateManifestLayer(text, "gen.yaml");
        expect(result.ok).toBe(false);
        if (!result.ok) expectWellFormed(result.issues, text);
        let thrown: unknown;
        try {
          parseManifestLayer(text, "gen.yaml");
        } catch (error) {
          thrown = error;
        }
        expect(ManifestError.is(thrown)).toBe(true);
      }),
      { numRuns: propertyRuns(100, 500) },
    );
  });

  test("each_defect_is_reported_with_its_own_code", () => {
    const expected: Record<Defect["kind"], ManifestErrorCode> = {
      alias: "YAML_ALIAS",
      anchor_only: "YAML_ALIAS",
      tag: "YAML_TAG",
      duplicate: "YAML_DUPLICATE_KEY",
      wrong_type: "INVALID_VALUE",
      second_document: "YAML_MULTIPLE_DOCUMENTS",
      forbidden: "FORBIDDEN_KEY",
      unknown: "UNKNOWN_KEY",
      merge_key: "YAML_MERGE_KEY",
      system_prompt: "SYSTEM_PROMPT_MOVED",
    };
    fc.assert(
      fc.property(model, defect, (m, d) => {
        const result = validateManifestLayer(render(m, [d]), "gen.yaml");
        expect(result.ok ? [] : result.issues.map((e) => e.code)).toContain(expected[d.kind]);
      }),
      { numRuns: propertyRuns(60, 300) },
    );
  });

  test("arbitrary_yamlish_text_never_throws_and_accepted_text_means_what_plain_yaml_says", () => {
    fc.assert(
      fc.property(yamlish, (text) => {
        const result = validateManifestLayer(text, "chaos.yaml");
        if (!result.ok) {
          expectWellFormed(result.issues, text);
          return;
        }
        // Nothing unsafe was accepted, so a plain parse must agree with the layer we returned.
        const plain: unknown = plainYamlParse(text, { logLevel: "silent" }) ?? {};
        expect(result.value).toEqual(plain);
      }),
      { numRuns: propertyRuns(200, 1000) },
    );
  });

  test("arbitrary_overlays_never_throw_from_validate", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("worker.max_turns", "scope.allow", "worker", "pod.name", "x", ""),
        fc.constantFrom(" = ", "=", " "),
        yamlish,
        (key, sep, value) => {
          const expression = `${key}${sep}${value}`;
          const result = validateOverlay(expression);
          if (!result.ok) expectWellFormed(result.issues, expression);
        },
      ),
      { numRuns: propertyRuns(100, 500) },
    );
  });
});
