import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { PromptLoaderError } from "@insomnia/prompt-loader";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePromptDirs, type PromptDirs } from "./__fixtures__/prompt-dirs.ts";
import { MAX_NESTING_DEPTH } from "./nesting-depth.ts";
import {
  DEFAULT_LIMITS,
  SystemPromptError,
  SystemPromptTemplate,
  type ParseOptions,
  type RenderContext,
  type SystemPromptErrorCode,
} from "./index.ts";
import { guarded } from "../../../test/support/output-guard.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";
import { loadHandlebarsParser } from "./handlebars-parser.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

// 10,000 templates mutated from the shipped default prompt and a few hand-written ones,
// each written to a real $workspace file and parsed + rendered through the real
// PromptLoader; then the denial-of-service shapes (deep nesting, include fan-out, nested
// loops, huge files). Every case must end in a SystemPromptError or in the prompt raw
// Handlebars would render; nothing may print, warn or reject unhandled.

const SEED = 0x7e_3b1a7e;
// Ten thousand in the deep run (INSOMNIA_DEEP_TESTS=1), two hundred by default.
const RUNS = propertyRuns(200, 10_000);

const CODES: ReadonlySet<SystemPromptErrorCode> = new Set<SystemPromptErrorCode>([
  "SYNTAX",
  "UNKNOWN_VARIABLE",
  "UNKNOWN_HELPER",
  "TYPE_ERROR",
  "FORBIDDEN",
  "INCLUDE_FAILED",
  "CYCLE",
  "TOO_DEEP",
  "TOO_MANY_INCLUDES",
  "EXPANSION_TOO_LARGE",
  "INVALID_CONTEXT",
  "RENDER_BUDGET_EXCEEDED",
  "OUTPUT_TOO_LARGE",
  "RENDER_FAILED",
]);

type HandlebarsModule = typeof import("handlebars");
const Handlebars = createRequire(import.meta.url)("handlebars") as HandlebarsModule;

// ---- fixture ----------------------------------------------------------------------------

const NOW = new Date(Date.UTC(2026, 10, 30, 16, 37, 5));
const SUMMARY = "Readable:\n  - /repo\n  - /docs\nWritable:\n  - /repo\n\n";
const AGENTS_MD = "Project rules for {{cwd}}";
/** A cwd that looks like template syntax: it must be printed, never interpreted. */
const CONTEXT: RenderContext = {
  now: NOW,
  cwd: "/repo/{{date}}",
  scope: { readable: ["/repo", "/docs"], writable: ["/repo"], summary: SUMMARY },
  tools: ["write_file", "read_file", "grep"],
  agentsMd: AGENTS_MD,
};
/** The root data raw Handlebars gets, built independently of render-data.ts. */
const RAW_DATA = {
  date: "2026-11-30",
  time: "16:37:05",
  datetime: "2026-11-30T16:37:05Z",
  cwd: "/repo/{{date}}",
  scope: { readable: ["/repo", "/docs"], writable: ["/repo"], summary: SUMMARY },
  tools: ["grep", "read_file", "write_file"],
};
const TRAILER =
  "---\n## Working boundaries\n\nReadable:\n  - /repo\n  - /docs\nWritable:\n  - /repo\n" +
  "\n---\n## Project instructions (AGENTS.md)\n\nProject rules for {{cwd}}\n";

/** Include targets that exist, so some mutated includes succeed. */
const INCLUDES: Readonly<Record<string, string>> = {
  "$workspace/x": "X({{cwd}})\n",
  "$workspace/w": "W: {{> x}} {{date}}\n",
  "$user/y": "Y: {{#each tools}}{{this}}{{#unless @last}}, {{/unless}}{{/each}}\n",
};
const MAIN = "$workspace/main";

const SEEDS: readonly string[] = [
  readFileSync(new URL("../../../resources/prompts/default.md", import.meta.url), "utf8"),
  // includes, standalone and inline
  'Header for {{cwd}}\n{{> x}}\n  {{> "$user/y"}}\nEnd {{> w}}|\n{{#if tools}}\n  {{> x}}\n{{/if}}\n',
  // each / with / if / unless / else, block params, @data
  "{{#each tools as |tool i|}}{{i}}: {{tool}}{{#if @first}} (first){{/if}} in {{cwd}}\n{{else}}(none){{/each}}\n" +
    "{{#with scope}}{{summary}}{{#each readable}}- {{this}} #{{@index}}\n{{/each}}{{/with}}\n" +
    "{{#unless scope.writable}}read-only{{else}}writable{{/unless}}\n" +
    "{{#if tools}}a{{else if scope.readable}}b{{else}}c{{/if}}\n",
  // join, comments, whitespace control, escapes, triple-stash
  '{{! a note }}{{!-- a long {{note}} --}}Tools: {{join tools ", "}} / {{join scope.readable}} / {{~join scope.writable scope.summary~}}\n' +
    "\\{{date}} {{date}} {{time}} {{datetime}} {{{cwd}}}\n  {{~#if tools~}}  trimmed  {{~/if~}}  \n",
  // nested block params
  "{{#with scope as |s|}}{{#each s.writable as |w|}}{{w}}@{{@index}}{{#if @last}}.{{/if}}{{/each}}{{/with}}\n" +
    "{{#each scope.readable}}{{#each tools}}{{this}}/{{/each}}{{/each}}",
];

const TOKENS = [
  "{{",
  "}}",
  "{{{",
  "}}}",
  "{{#if tools}}",
  "{{/if}}",
  "{{#each tools}}",
  "{{/each}}",
  "{{#with scope}}",
  "{{/with}}",
  "{{> x}}",
  '{{> "$user/y"}}',
  "{{> w}}",
  "{{> missing}}",
  "{{> main}}",
  "{{>",
  "{{else}}",
  "{{@index}}",
  "{{this}}",
  "{{cwd}}",
  "{{scope}}",
  "{{../cwd}}",
  "{{!--",
  "--}}",
  "~",
  "|",
  "as |t|",
  "(",
  ")",
  "\\",
  "\n",
  " ",
  // balanced pieces, so that many mutants still render
  "{{#if tools}}T{{else}}F{{/if}}",
  "{{#each tools}}{{@index}}={{this}};{{/each}}",
  "{{#with scope}}{{summary}}{{/with}}",
  '{{join tools "|"}}',
  "{{#unless scope.writable}}ro{{/unless}}",
  "\n{{> x}}\n",
  "  {{> w}}\n",
  "{{~cwd~}}",
  "{{! c }}",
] as const;

// ---- generators -------------------------------------------------------------------------

/** Where an edit lands: anywhere, or just around the k-th `{{` so tags get hit often. */
type At = number | { readonly tag: number; readonly offset: number };
type Op =
  | { readonly kind: "delete"; readonly at: At; readonly length: number }
  | { readonly kind: "insert"; readonly at: At; readonly text: string }
  | { readonly kind: "duplicate"; readonly at: At; readonly length: number; readonly to: At };

const atArb: fc.Arbitrary<At> = fc.oneof(
  fc.nat(),
  fc.record({ tag: fc.nat(), offset: fc.integer({ min: -4, max: 16 }) }),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("delete"), at: atArb, length: fc.integer({ min: 1, max: 60 }) }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("insert"), at: atArb, text: fc.constantFrom(...TOKENS) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("insert"),
      at: atArb,
      text: fc.string({ unit: "binary", minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("duplicate"),
      at: atArb,
      length: fc.integer({ min: 1, max: 200 }),
      to: atArb,
    }),
  },
);
const caseArb = fc.record({
  seed: fc.nat({ max: SEEDS.length - 1 }),
  ops: fc.array(opArb, { minLength: 1, maxLength: 4 }),
});

function resolveAt(text: string, at: At): number {
  if (typeof at === "number") return at % (text.length + 1);
  const tags: number[] = [];
  for (let i = text.indexOf("{{"); i !== -1; i = text.indexOf("{{", i + 2)) tags.push(i);
  const base = tags.length === 0 ? 0 : (tags[at.tag % tags.length] ?? 0);
  return Math.min(text.length, Math.max(0, base + at.offset));
}

/** Applies the edits in order. */
function mutate(seed: string, ops: readonly Op[]): string {
  let text = seed;
  for (const op of ops) {
    const at = resolveAt(text, op.at);
    if (op.kind === "delete") text = text.slice(0, at) + text.slice(at + op.length);
    else if (op.kind === "insert") text = text.slice(0, at) + op.text + text.slice(at);
    else {
      const to = resolveAt(text, op.to);
      text = text.slice(0, to) + text.slice(at, at + op.length) + text.slice(to);
    }
  }
  return text;
}

// ---- raw Handlebars, the oracle for correct renders -------------------------------------

/**
 * Raw Handlebars (a fresh environment with its built-in helpers), compat mode: names not found on the current item are looked up in the
 * enclosing contexts, which is what "root variables are visible everywhere" means, also
 * inside includes called from a loop. Includes are flattened as registered partials.
 */
function rawHandlebars(): (text: string) => string | undefined {
  const hb = Handlebars.create();
  hb.registerHelper("join", (list: unknown, ...rest: unknown[]) => {
    const separator = rest.length === 2 ? String(rest[0]) : ", ";
    return (list as unknown[]).map(String).join(separator);
  });
  // Not `strict`: Handlebars' strict lookups break on string items in compat mode, and a
  // template that renders has passed the checker, so every name it uses exists.
  const options = { noEscape: true, compat: true };
  const partials: Record<string, HandlebarsTemplateDelegate> = {};
  for (const [ref, text] of Object.entries(INCLUDES)) {
    const compiled = hb.compile(text, options);
    const short = ref.slice(ref.indexOf("/") + 1);
    partials[ref] = compiled;
    if (ref.startsWith("$workspace/")) partials[short] = compiled;
  }
  return (text) => {
    try {
      return hb.compile(text, options)(RAW_DATA, { partials });
    } catch {
      return undefined;
    }
  };
}

/** What the prompt-loader does to text read from a file: UTF-8 round trip, one BOM, CRLF/CR -> LF. */
function asLoaded(text: string): string {
  const decoded = Buffer.from(text, "utf8").toString("utf8");
  return (decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded).replace(/\r\n?/g, "\n");
}

/** The documented system prompt for a rendered instruction, assembled here without the package. */
function expectedPrompt(instruction: string): string {
  const body = instruction.replace(/\n+$/, "");
  return body === "" ? TRAILER : `${body}\n\n${TRAILER}`;
}

// ---- counting and checks ----------------------------------------------------------------

const counts = {
  cases: 0,
  errors: 0,
  withCode: 0,
  withPosition: 0,
  lineOnly: 0,
  renders: 0,
  equalToRaw: 0,
  rawRefused: 0,
  byCode: new Map<string, number>(),
  noPosition: new Map<string, number>(),
};

interface ShapeResult {
  readonly name: string;
  /** The outcome matched the stated one. */
  readonly ok: boolean;
  /** "render", or "CODE at ref:line:column". */
  readonly outcome: string;
  readonly ms: number;
  readonly work: string;
}
const shapes: ShapeResult[] = [];

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Fails the case with `what` unless `ok`; plain code because it runs 10,000 times. */
function check(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

/** A thrown value must be a SystemPromptError with a documented code and a position inside its file. */
function checkError(error: unknown, texts: ReadonlyMap<string, string>): SystemPromptError {
  if (!SystemPromptError.is(error)) throw error;
  const e = error;
  check(CODES.has(e.code), () => `undocumented code ${String(e.code)}`);
  check(e.name === "SystemPromptError" && e.message.length > 0, () => `bad name or message: ${e.name}`);
  if (e.line !== undefined) {
    const text = texts.get(e.ref ?? "");
    check(text !== undefined, () => `${e.code} at ${e.line}:${e.column} in unknown ref ${e.ref}`);
    const lines = (text ?? "").split("\n");
    check(
      Number.isInteger(e.line) && e.line >= 1 && e.line <= lines.length,
      () => `${e.code} line ${e.line} outside ${lines.length} lines`,
    );
    if (e.column !== undefined) {
      const width = (lines[e.line - 1] ?? "").length;
      check(
        Number.isInteger(e.column) && e.column >= 1 && e.column <= width + 1,
        () => `${e.code} column ${e.column} outside line ${e.line} (${width} wide)`,
      );
    }
  }
  return e;
}

function countError(e: SystemPromptError): void {
  counts.errors += 1;
  if (CODES.has(e.code)) counts.withCode += 1;
  bump(counts.byCode, e.code);
  if (e.line !== undefined && e.column !== undefined) counts.withPosition += 1;
  else if (e.line !== undefined) counts.lineOnly += 1;
  else bump(counts.noPosition, e.code);
}

// ---- setup ------------------------------------------------------------------------------

let p: PromptDirs;

beforeAll(() => {
  p = makePromptDirs();
  for (const [ref, text] of Object.entries(INCLUDES)) p.write(ref, text);
});

afterAll(() => {
  p.cleanup();
  const share = counts.errors === 0 ? 0 : (100 * counts.withPosition) / counts.errors;
  const without = [...counts.noPosition.entries()].map(([code, n]) => `${code} ${n}`).join(", ");
  const codes = [...counts.byCode.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([code, n]) => `${code} ${n}`);
  const stated = shapes.filter((s) => s.ok).length;
  console.log(
    `[hostile-input] @insomnia/template (seed ${SEED}): ${counts.cases} mutated templates: ${counts.errors} SystemPromptError ` +
      `(${counts.withCode} with a code, ${counts.withPosition} with a position = ${share.toFixed(1)}%, ${counts.lineOnly} with a line only, ` +
      `without a position: ${without === "" ? "none" : without}), ${counts.renders} correct renders ` +
      `(${counts.equalToRaw} equal to raw Handlebars, ${counts.rawRefused} raw Handlebars refused); ${codes.join(", ")}; ` +
      `DoS shapes: ${stated}/${shapes.length} ended as stated`,
  );
  for (const s of shapes) {
    console.log(
      `[hostile-input]   ${s.name}: ${s.ok ? "" : "NOT AS STATED: "}${s.outcome} in ${s.ms.toFixed(0)} ms (${s.work})`,
    );
  }
});

// ---- mutated templates ------------------------------------------------------------------

const raw = rawHandlebars();
const includeTexts = new Map(Object.entries(INCLUDES));

async function runCase(c: { seed: number; ops: readonly Op[] }): Promise<void> {
  const text = mutate(SEEDS[c.seed] ?? "", c.ops);
  counts.cases += 1;
  p.write(MAIN, text);
  const loaded = asLoaded(text);
  const texts = new Map([...includeTexts, [MAIN, loaded]]);
  let prompt: string;
  try {
    const template = await SystemPromptTemplate.parse(MAIN, p.loader);
    prompt = template.render(CONTEXT);
  } catch (error) {
    countError(checkError(error, texts));
    return;
  }
  counts.renders += 1;
  check(
    typeof prompt === "string" && prompt.endsWith(TRAILER),
    () => `the trailing section is not exact at the end: ${JSON.stringify(prompt.slice(-300))}`,
  );
  const instruction = prompt.slice(0, -TRAILER.length);
  check(
    instruction === "" || (instruction.endsWith("\n\n") && !instruction.endsWith("\n\n\n")),
    () => `bad join before the trailer: ${JSON.stringify(instruction.slice(-40))}`,
  );
  for (const bad of ["[object Object]", "undefined", "function"]) {
    check(
      !instruction.includes(bad) || loaded.includes(bad) || SEEDS.some((s) => s.includes(bad)),
      () => `the prompt contains ${bad}`,
    );
  }
  const expected = raw(loaded);
  if (expected === undefined) {
    counts.rawRefused += 1;
    return;
  }
  check(
    prompt === expectedPrompt(expected),
    () => `differs from raw Handlebars:\n${JSON.stringify(prompt)}\n${JSON.stringify(expectedPrompt(expected))}`,
  );
  counts.equalToRaw += 1;
}

describe("templates under hostile input", () => {
  it("ten_thousand_mutated_templates_end_in_a_SystemPromptError_or_a_correct_render", async () => {
    const { printed, rejections } = await guarded(async () => {
      await fc.assert(fc.asyncProperty(caseArb, runCase), {
        seed: SEED,
        numRuns: RUNS,
        examples: [
          [{ seed: 0, ops: [] }],
          [{ seed: 1, ops: [] }],
          [{ seed: 2, ops: [] }],
          [{ seed: 3, ops: [] }],
          [{ seed: 4, ops: [] }],
          [{ seed: 1, ops: [{ kind: "insert", at: 0, text: "{{> main}}" }] }],
          [{ seed: 1, ops: [{ kind: "insert", at: 0, text: "{{> missing}}" }] }],
          [{ seed: 0, ops: [{ kind: "delete", at: { tag: 5, offset: 0 }, length: 7 }] }],
        ],
      });
    });
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(counts.cases).toBe(RUNS);
    expect(counts.errors + counts.renders).toBe(counts.cases);
    expect(counts.withCode).toBe(counts.errors);
    // Only a bad root reference has no position; every other error points into a file.
    expect([...counts.noPosition.keys()].filter((code) => code !== "INCLUDE_FAILED")).toEqual([]);
    expect(counts.lineOnly).toBe(0);
    // Not vacuous: both outcomes, most error kinds, and real comparisons with raw Handlebars.
    for (const code of ["SYNTAX", "UNKNOWN_VARIABLE", "TYPE_ERROR", "FORBIDDEN", "INCLUDE_FAILED", "CYCLE"]) {
      expect([code, counts.byCode.get(code) ?? 0]).not.toEqual([code, 0]);
    }
    expect(counts.renders).toBeGreaterThan(RUNS / 20);
    // Every template that rendered printed exactly what raw Handlebars prints.
    expect(counts.equalToRaw).toBe(counts.renders);
  });
});

// ---- denial-of-service shapes -----------------------------------------------------------

/** What a shape must end in: a code (with or without a position), or a render of `instruction`. */
type Expected =
  | { readonly code: SystemPromptErrorCode; readonly positioned: boolean }
  | { readonly instruction: string };

interface Shape {
  readonly name: string;
  /** Files under $workspace/dos/<dir or name>/; the root is `main`. */
  readonly files: Readonly<Record<string, string>>;
  /** Shares another shape's files (and so the parsed-file cache). */
  readonly dir?: string;
  readonly parse?: ParseOptions;
  readonly context?: Partial<RenderContext>;
  readonly expected: Expected;
  /** The work the shape asks for, in the units the limits count. */
  readonly work: string;
}

const TOOLS_100 = Array.from({ length: 100 }, (_, i) => `t${String(i).padStart(3, "0")}`);
const nest = (open: string, body: string, close: string, depth: number): string =>
  open.repeat(depth) + body + close.repeat(depth);

/** file i includes file i+1 `times` times, `levels` levels deep, then a leaf. */
function fanOut(times: number, levels: number, leaf: string): Record<string, string> {
  const files: Record<string, string> = { main: "{{> f0}}" };
  for (let i = 0; i < levels; i++) files[`f${i}`] = `{{> f${i + 1}}}`.repeat(times);
  files[`f${levels}`] = leaf;
  return files;
}

const SHAPES: readonly Shape[] = [
  ...[100, 500, 1000, 5000].flatMap((depth): Shape[] =>
    depth <= MAX_NESTING_DEPTH
      ? [
          {
            name: `if_nesting_${depth}`,
            files: { main: nest("{{#if tools}}", "x", "{{/if}}", depth) },
            expected: { instruction: "x" },
            work: `${depth} steps`,
          },
          {
            name: `each_nesting_${depth}_over_3_tools`,
            files: { main: nest("{{#each tools}}", "{{this}}", "{{/each}}", depth) },
            expected: { code: "RENDER_BUDGET_EXCEEDED", positioned: true },
            work: `3^${depth} iterations asked, stopped at ${DEFAULT_LIMITS.maxSteps} steps`,
          },
          {
            name: `with_nesting_${depth}`,
            files: { main: nest("{{#with scope}}", "{{summary}}", "{{/with}}", depth) },
            expected: { instruction: SUMMARY },
            work: `${depth} steps`,
          },
        ]
      : (
          [
            "{{#if tools}}|x|{{/if}}",
            "{{#each tools}}|{{this}}|{{/each}}",
            "{{#with scope}}|{{summary}}|{{/with}}",
          ] as const
        ).map((parts): Shape => {
          const [open, body, close] = parts.split("|") as [string, string, string];
          return {
            name: `${open.slice(3, open.indexOf(" "))}_nesting_${depth}`,
            files: { main: nest(open, body, close, depth) },
            expected: { code: "TOO_DEEP", positioned: true },
            work: `${depth} nested blocks > ${MAX_NESTING_DEPTH}, refused on the tokens before Handlebars parses`,
          };
        }),
  ),
  {
    name: "else_unless_chain_1000",
    files: {
      main: `{{#unless tools}}0${Array.from({ length: 1000 }, (_, i) => `{{else unless tools}}${i + 1}`).join("")}{{else}}end{{/unless}}`,
    },
    expected: { code: "TOO_DEEP", positioned: true },
    work: `1000 chained {{else unless}} (nested inverse programs) > ${MAX_NESTING_DEPTH}`,
  },
  {
    name: "subexpression_nesting_1000",
    files: { main: `{{join ${"(a ".repeat(1000)}${")".repeat(1000)}}}` },
    expected: { code: "TOO_DEEP", positioned: true },
    work: `1000 nested subexpressions > ${MAX_NESTING_DEPTH}, refused before parsing`,
  },
  {
    name: "include_fan_out_2^10",
    files: fanOut(2, 10, "L"),
    expected: { instruction: "L".repeat(1024) },
    work: "2047 include calls, 3070 expanded statements",
  },
  {
    name: "include_fan_out_2^15",
    files: fanOut(2, 15, "L"),
    expected: { instruction: "L".repeat(2 ** 15) },
    work: `65535 include calls, 98303 expanded statements: just under ${DEFAULT_LIMITS.maxExpandedNodes}, 16 include levels`,
  },
  ...[16, 20, 30].map(
    (k): Shape => ({
      name: `include_fan_out_2^${k}`,
      files: fanOut(2, k, "L"),
      expected: { code: "TOO_DEEP", positioned: true },
      work: `${k + 1} include levels > ${DEFAULT_LIMITS.maxIncludeDepth}`,
    }),
  ),
  {
    name: "include_fan_out_2^30_depth_limit_64",
    files: fanOut(2, 30, "L"),
    parse: { maxIncludeDepth: 64 },
    expected: { code: "EXPANSION_TOO_LARGE", positioned: true },
    work: `~3.2e9 expanded statements > ${DEFAULT_LIMITS.maxExpandedNodes}, counted per file without expanding`,
  },
  {
    name: "include_fan_out_10^8",
    files: fanOut(10, 8, "L"),
    expected: { code: "EXPANSION_TOO_LARGE", positioned: true },
    work: `~2.1e8 expanded statements > ${DEFAULT_LIMITS.maxExpandedNodes}`,
  },
  {
    name: "includes_in_3_nested_each_over_100_tools",
    files: { main: nest("{{#each tools}}", "{{> leaf}}", "{{/each}}", 3), leaf: "L" },
    context: { tools: TOOLS_100 },
    expected: { code: "RENDER_BUDGET_EXCEEDED", positioned: true },
    work: `10^6 include calls asked (7 statements statically), stopped at ${DEFAULT_LIMITS.maxSteps} steps`,
  },
  {
    name: "each_nesting_6_over_100_tools",
    files: { main: nest("{{#each tools}}", "{{this}}", "{{/each}}", 6) },
    context: { tools: TOOLS_100 },
    expected: { code: "RENDER_BUDGET_EXCEEDED", positioned: true },
    work: `10^12 iterations asked, stopped at ${DEFAULT_LIMITS.maxSteps} steps`,
  },
  {
    name: "each_output_over_1MiB",
    files: { main: `{{#each tools}}${"a".repeat(12_000)}{{/each}}` },
    context: { tools: TOOLS_100 },
    expected: { code: "OUTPUT_TOO_LARGE", positioned: true },
    work: `1.2 MB asked, stopped past ${DEFAULT_LIMITS.maxOutputBytes} bytes`,
  },
  {
    name: "single_line_1MiB",
    files: { main: "a".repeat(1024 * 1024) },
    expected: { instruction: "a".repeat(1024 * 1024) },
    work: "1048576 bytes: the largest file the loader reads",
  },
  {
    name: "single_line_1MiB_plus_1",
    files: { main: "a".repeat(1024 * 1024 + 1) },
    expected: { code: "INCLUDE_FAILED", positioned: false },
    work: "1048577 bytes, refused by the loader (cause TOO_LARGE) before parsing",
  },
  {
    name: "cwd_10000_times",
    files: { main: "{{cwd}}".repeat(10_000) },
    context: { cwd: "/r" },
    expected: { instruction: "/r".repeat(10_000) },
    work: `10000 statements (= maxFileStatements), 20000 bytes out`,
  },
  {
    name: "cwd_10000_times_long_cwd",
    files: { main: "{{cwd}}".repeat(10_000) },
    dir: "cwd_10000_times",
    context: { cwd: `/${"d".repeat(120)}` },
    expected: { code: "OUTPUT_TOO_LARGE", positioned: false },
    work: `1.2 MB asked, crossed by top-level text (no block to point at)`,
  },
  {
    name: "cwd_100000_times",
    files: { main: "{{cwd}}".repeat(100_000) },
    expected: { code: "EXPANSION_TOO_LARGE", positioned: true },
    work: `100000 statements in one file > ${DEFAULT_LIMITS.maxFileStatements}, refused before compiling`,
  },
  {
    name: "comments_100001",
    files: { main: "{{!}}".repeat(100_001) },
    expected: { code: "EXPANSION_TOO_LARGE", positioned: true },
    work: `100001 statements in one file > ${DEFAULT_LIMITS.maxExpandedNodes}`,
  },
  // Past Handlebars' recursion depth: refused with a position before Handlebars parses.
  {
    name: "with_nesting_1500",
    files: { main: nest("{{#with scope}}", "{{summary}}", "{{/with}}", 1500) },
    expected: { code: "TOO_DEEP", positioned: true },
    work: `1500 nested blocks > ${MAX_NESTING_DEPTH}`,
  },
  {
    name: "else_if_chain_3000",
    files: { main: `{{#if tools}}${"{{else if cwd}}".repeat(3000)}{{/if}}` },
    expected: { code: "TOO_DEEP", positioned: true },
    work: `3000 chained {{else if}} > ${MAX_NESTING_DEPTH}`,
  },
  // Issue 19: block parameters named like @variables, which Handlebars reads instead of them.
  ...(
    [
      ["block_param_index", "{{#each tools as |t index|}}{{@index}},{{/each}}"],
      ["block_param_first", "{{#each tools as |first|}}{{#if @first}}F{{/if}}{{/each}}"],
      ["block_param_last", "{{#each tools as |t last|}}{{@last}}{{/each}}"],
      ["block_param_key_in_with", "{{#each tools}}{{#with scope as |key|}}{{@key}}{{/with}}{{/each}}"],
      ["block_param_index_outer", "{{#each tools as |t index|}}{{#each scope.readable}}{{@index}}{{/each}}{{/each}}"],
      ["block_param_root", "{{#each tools as |root|}}{{cwd}}{{/each}}"],
    ] as const
  ).map(
    ([name, main]): Shape => ({
      name,
      files: { main },
      expected: { code: "FORBIDDEN", positioned: true },
      work: "refused by the checker: Handlebars would print the parameter where @index & co. are written",
    }),
  ),
  // Issue 19: a rule that fails only at the end of the file, once per tag, was quadratic.
  ...[40_000, 349_525].map(
    (times): Shape => ({
      name: `unclosed_literal_segment_${times}_times`,
      files: { main: "{{[".repeat(times) },
      expected: { code: "SYNTAX", positioned: true },
      work: `${3 * times} bytes of \`{{[\`: located at 1:1, lexed up to the first INVALID token`,
    }),
  ),
  {
    name: "unclosed_comment_tag_300000_times",
    files: { main: "{{!".repeat(300_000) },
    expected: { code: "SYNTAX", positioned: true },
    work: "900000 bytes of `{{!` with no `}}`: located at 1:1",
  },
  {
    name: "cwd_149000_times_then_unclosed_if",
    files: { main: `${"{{cwd}}".repeat(149_000)}{{#if}}` },
    expected: { code: "EXPANSION_TOO_LARGE", positioned: true },
    work: `149001 statements that do not parse: the per-file cap (${DEFAULT_LIMITS.maxFileStatements}) before the locator`,
  },
  // Issue 19: one body of 10,000 values, each counted as it is printed.
  {
    name: "join_7537_readable_10000_times",
    files: { main: "{{join scope.readable}}".repeat(10_000) },
    context: {
      scope: {
        readable: Array.from({ length: 7537 }, (_, i) => `/srv/project/module-${i}`),
        writable: [],
        summary: SUMMARY,
      },
    },
    expected: { code: "OUTPUT_TOO_LARGE", positioned: false },
    work: "~1.8 GB asked (it used to build it and fail with RENDER_FAILED), stopped one join past the cap",
  },
  {
    name: "summary_64KiB_10000_times",
    files: { main: "{{scope.summary}}".repeat(10_000) },
    context: { scope: { readable: [], writable: [], summary: "s".repeat(64 * 1024) } },
    expected: { code: "OUTPUT_TOO_LARGE", positioned: false },
    work: "640 MiB asked (over V8's longest string: it used to be RENDER_FAILED), stopped one value past the cap",
  },
  {
    name: "join_200_tools_10000_times_in_a_block",
    files: { main: `{{#if cwd}}${"{{join tools}}".repeat(9_999)}{{/if}}` },
    context: { tools: Array.from({ length: 200 }, (_, i) => `tool_${i}`) },
    expected: { code: "OUTPUT_TOO_LARGE", positioned: true },
    work: "~19 MB asked, stopped one join past the cap, at the block",
  },
  {
    // Found by a differential hunt: the nesting pre-check read only 14 characters after `{{`,
    // so spaces before `else` hid the chain and Handlebars' parser spent minutes on it.
    name: "else_if_chain_10000_with_spaces_before_else",
    files: { main: `{{#if cwd}}a${"{{               else if cwd}}b".repeat(10_000)}{{/if}}` },
    expected: { code: "TOO_DEEP", positioned: true },
    work: `10000 chained {{               else if}} > ${MAX_NESTING_DEPTH}, refused on the tokens before Handlebars parses`,
  },
];

function outcomeOf(result: { prompt: string } | { error: unknown }): string {
  if ("prompt" in result) return "render";
  const e = result.error;
  if (!SystemPromptError.is(e)) return `not a SystemPromptError: ${String(e)}`;
  return `${e.code} at ${e.ref ?? "-"}:${e.line ?? "-"}:${e.column ?? "-"}`;
}

function matches(result: { prompt: string } | { error: unknown }, expected: Expected, dir: string): boolean {
  if ("instruction" in expected) return "prompt" in result && result.prompt === expectedPrompt(expected.instruction);
  if (!("error" in result) || !SystemPromptError.is(result.error)) return false;
  const e = result.error;
  const positioned = e.line !== undefined && e.column !== undefined;
  return (
    e.code === expected.code &&
    positioned === expected.positioned &&
    e.ref?.startsWith(`${dir}/`) === true &&
    (e.code !== "INCLUDE_FAILED" || (PromptLoaderError.is(e.cause) && e.cause.code === "TOO_LARGE"))
  );
}

describe("denial-of-service shapes", () => {
  for (const shape of SHAPES) {
    it(`${shape.name}_ends_as_stated`, async () => {
      const dir = `$workspace/dos/${(shape.dir ?? shape.name).replace(/[^A-Za-z0-9_-]/g, "_")}`;
      for (const [name, text] of Object.entries(shape.files)) p.write(`${dir}/${name}`, text);
      let result: { prompt: string } | { error: unknown } = { error: new Error("not run") };
      let ms = 0;
      const { printed, rejections } = await guarded(async () => {
        const start = performance.now();
        try {
          const template = await SystemPromptTemplate.parse(`${dir}/main`, p.loader, shape.parse);
          result = { prompt: template.render({ ...CONTEXT, ...shape.context }) };
        } catch (error) {
          result = { error };
        }
        ms = performance.now() - start;
      });
      const ok = matches(result, shape.expected, dir);
      const outcome = outcomeOf(result);
      shapes.push({ name: shape.name, ok, outcome, ms, work: shape.work });
      expect(printed).toEqual([]);
      expect(rejections).toEqual([]);
      expect([outcome, ok]).toEqual([outcome, true]);
    });
  }
});
