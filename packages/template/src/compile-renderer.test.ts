import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { parseRef, type LoadedPrompt } from "@insomnia/prompt-loader";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkTemplate } from "./check-template.ts";
import { compileRenderer } from "./compile-renderer.ts";
import { RenderBudget } from "./render-budget.ts";
import type { HbsProgram, HbsStatement } from "./handlebars-ast.ts";
import { loadHandlebarsParser, parseTemplateText } from "./handlebars-parser.ts";
import { SystemPromptError, SystemPromptTemplate, type RenderContext, type TemplateLoader } from "./index.ts";
import { TEMPLATE_ATOMS } from "./__fixtures__/template-atoms.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

// The renderer against Handlebars itself: Handlebars' main entry compiles the same checked
// (rewritten) AST with strict lookups, no escaping, its own if/unless/each/with and a join
// helper, with each include registered as a partial. Every template that passes the checker
// must render byte for byte the same.

const Handlebars = createRequire(import.meta.url)("handlebars") as typeof import("handlebars");

const MAIN = "$workspace/main";
const PART = "$workspace/part";
/** What `{{> part}}` includes: several lines (for indentation), a loop, a trailing newline. */
const PART_TEXT =
  "P {{cwd}}\n{{#each tools}}\n- {{this}}{{#if @last}}.{{/if}}\n{{/each}}\n\ntail {{join scope.readable}}\n";

const SCOPE = {
  readable: ["/repo", "/docs"],
  writable: ["/repo"],
  summary: "Readable:\n  - /repo\nWritable:\n  - /repo",
};
const NOW = new Date(Date.UTC(2026, 10, 30, 16, 37, 5));
const CONTEXTS: readonly RenderContext[] = [
  { now: NOW, cwd: "/repo", scope: SCOPE, tools: ["write_file", "read_file", "grep"] },
  { now: NOW, cwd: "", scope: { readable: [], writable: [], summary: "" }, tools: [] },
  { now: NOW, cwd: "/ü {{x}}", scope: SCOPE, tools: ["only"] },
];

/** The root data Handlebars gets for a context, written out independently of render-data.ts. */
function dataOf(ctx: RenderContext) {
  return {
    date: "2026-11-30",
    time: "16:37:05",
    datetime: "2026-11-30T16:37:05Z",
    cwd: ctx.cwd,
    scope: ctx.scope,
    tools: [...ctx.tools].sort(),
  };
}

/** The compile options the package used when Handlebars rendered its templates. */
const HANDLEBARS_OPTIONS = {
  data: true,
  noEscape: true,
  strict: true,
  knownHelpersOnly: true,
  knownHelpers: { if: true, unless: true, each: true, with: true, join: true },
  compat: false,
  preventIndent: false,
};

const resolve = (name: string): string => parseRef(name, parseRef(MAIN)).canonical;

/**
 * Handlebars joins a body's appends into one `+` expression, so a body that starts with two
 * values that are not strings adds them: `{{@first}}{{@key}}` prints "1", not "true0". The
 * renderer prints each value (the README lists this). The reference starts every body with
 * an empty string, `{{@root.empty}}`, which makes the `+` concatenate.
 */
function startBodiesWithText(program: HbsProgram | undefined): HbsProgram | undefined {
  if (program === undefined) return undefined;
  // An `{{else if}}` link is a program holding only the chained block; Handlebars needs it so.
  if (program.chained === true) {
    for (const node of program.body) {
      if (node.type === "BlockStatement") {
        startBodiesWithText(node.program);
        startBodiesWithText(node.inverse);
      }
    }
    return program;
  }
  for (const node of program.body) {
    if (node.type === "BlockStatement") {
      startBodiesWithText(node.program);
      startBodiesWithText(node.inverse);
    }
  }
  program.body.unshift(Handlebars.parse("{{@root.empty}}").body[0] as unknown as HbsStatement);
  return program;
}

function handlebarsRender(text: string, ctx: RenderContext): string {
  const hb = Handlebars.create();
  hb.registerHelper("join", (list: unknown, ...rest: unknown[]) =>
    (list as unknown[]).map(String).join(rest.length === 2 ? String(rest[0]) : ", "),
  );
  const main = checkTemplate(parseTemplateText(text), { ref: MAIN }, resolve);
  const part = hb.compile(
    startBodiesWithText(checkTemplate(parseTemplateText(PART_TEXT), { ref: PART }, resolve).ast),
    HANDLEBARS_OPTIONS,
  );
  const partials = Object.fromEntries(main.includes.map((site) => [site.partialName, part]));
  return hb.compile(startBodiesWithText(main.ast), HANDLEBARS_OPTIONS)({ ...dataOf(ctx), empty: "" }, { partials });
}

function memoryLoader(files: Readonly<Record<string, string>>): TemplateLoader {
  return {
    load: async (ref) => {
      const parsed = typeof ref === "string" ? parseRef(ref) : ref;
      const text = files[parsed.canonical];
      if (text === undefined) throw new Error(`no file ${parsed.canonical}`);
      const sha256 = createHash("sha256").update(text).digest("hex");
      return { ref: parsed, text, file: `/mem/${parsed.path}.md`, sha256 } satisfies LoadedPrompt;
    },
  };
}

/** Random atoms: mostly unbalanced or misplaced, so mostly rejected. */
const atomTemplate = fc
  .array(fc.constantFrom(...TEMPLATE_ATOMS), { minLength: 1, maxLength: 16 })
  .map((atoms) => atoms.join(""));

/** What a spot in a template can see: the names that are right there. */
interface Where {
  /** What `this` is. */
  readonly context: "root" | "item" | "scope";
  /** Inside `#each`: the @variables exist. */
  readonly inLoop: boolean;
  readonly params: readonly string[];
}

const EVERYWHERE = [
  "text",
  "\n",
  "  ",
  "é😀 ",
  "{{cwd}}",
  "{{date}}",
  "{{datetime}}",
  "{{{time}}}",
  "{{join tools}}",
  '{{join scope.readable " | "}}',
  "{{!c}}",
  "{{~cwd~}}",
  "  {{> part}}\n",
  "{{> part}}",
  "{{join tools scope.summary}}",
];

function leaves(where: Where): string[] {
  const out = [...EVERYWHERE];
  if (where.inLoop) out.push("{{@index}}", "{{@first}}", "{{@last}}", "{{@key}}");
  if (where.context === "item") out.push("{{this}}", "{{.}}");
  if (where.context === "scope") out.push("{{summary}}", "{{join readable}}", "{{this.summary}}");
  for (const param of where.params) out.push(param === "s" ? "{{s.summary}}" : `{{${param}}}`);
  // What a block parameter named like an @variable changes in Handlebars.
  if (where.params.some((param) => DATA_NAMES.has(param))) out.push("{{@index}}", "{{@first}}", "{{@key}}", "{{cwd}}");
  return out;
}

function conditions(where: Where): string[] {
  const out = ["tools", "scope.writable", "cwd"];
  if (where.inLoop) out.push("@first", "@last", "@index");
  if (where.context === "item") out.push("this");
  if (where.context === "scope") out.push("readable");
  for (const param of where.params) out.push(param === "s" ? "s.readable" : param);
  return out;
}

/**
 * Block parameters of `#each` and `#with`: mostly usable ones, and the names of the
 * @variables, which Handlebars looks up before `@index` & co. (so they must be refused).
 */
const DATA_NAMED_EACH: readonly (readonly string[])[] = [
  ["tool", "index"],
  ["index"],
  ["first"],
  ["tool", "last"],
  ["tool", "key"],
  ["root"],
];
const DATA_NAMED_WITH: readonly (readonly string[])[] = [["key"], ["root"], ["first"]];
/** A block's parameters: none, usable ones, or (rarely, since one spoils the whole template) @variable names. */
const blockParams = (usable: readonly string[], dataNamed: readonly (readonly string[])[]) =>
  fc.oneof(
    { arbitrary: fc.constantFrom<readonly string[]>([], usable), weight: 99 },
    { arbitrary: fc.constantFrom(...dataNamed), weight: 1 },
  );
const EACH_PARAMS = blockParams(["tool", "i"], DATA_NAMED_EACH);
const WITH_PARAMS = blockParams(["s"], DATA_NAMED_WITH);
const DATA_NAMES = new Set(["index", "first", "last", "key", "root"]);

/** True when a block of `text` names a block parameter like an @variable. */
function namesParamLikeData(text: string): boolean {
  for (const [, names] of text.matchAll(/as \|([^|]*)\|/g)) {
    if ((names ?? "").split(/\s+/).some((name) => DATA_NAMES.has(name))) return true;
  }
  return false;
}

/** Balanced blocks of the template language, with names that are right where they land. */
function templateBody(depth: number, where: Where): fc.Arbitrary<string> {
  const choices: fc.Arbitrary<string>[] = [fc.constantFrom(...leaves(where))];
  if (depth > 0) {
    const inner = (next: Where) => templateBody(depth - 1, next);
    const withParams = (params: readonly string[]): readonly string[] => [
      ...where.params.filter((p) => !params.includes(p)),
      ...params,
    ];
    const eachWhere = (params: readonly string[]): Where => ({
      context: "item",
      inLoop: true,
      params: withParams(params),
    });
    const lists =
      where.context === "scope"
        ? ["tools", "scope.readable", "readable", "writable"]
        : ["tools", "scope.readable", "scope.writable"];
    choices.push(
      fc
        .tuple(
          fc.constantFrom("if", "unless"),
          fc.constantFrom(...conditions(where)),
          inner(where),
          fc.option(fc.tuple(fc.constantFrom("if", "unless"), fc.constantFrom(...conditions(where)), inner(where))),
          fc.option(inner(where)),
          fc.boolean(),
        )
        .map(([helper, condition, body, link, otherwise, standalone]) => {
          // An optional `{{else if x}}` / `{{else unless x}}` link before the final else.
          const chained =
            link === null
              ? body
              : `${body}${standalone ? "\n" : ""}{{else ${link[0]} ${link[1]}}}${standalone ? "\n" : ""}${link[2]}`;
          return block(helper, condition, chained, otherwise, standalone);
        }),
      fc
        .tuple(fc.constantFrom(...lists), EACH_PARAMS, fc.option(inner(where)), fc.boolean())
        .chain(([list, params, otherwise, standalone]) =>
          inner(eachWhere(params)).map((body) =>
            block("each", params.length > 0 ? `${list} as |${params.join(" ")}|` : list, body, otherwise, standalone),
          ),
        ),
      fc
        .tuple(WITH_PARAMS, fc.boolean())
        .chain(([params, standalone]) =>
          inner({ context: "scope", inLoop: where.inLoop, params: withParams(params) }).map((body) =>
            block("with", params.length > 0 ? `scope as |${params.join(" ")}|` : "scope", body, null, standalone),
          ),
        ),
    );
  }
  return fc.array(fc.oneof(...choices), { maxLength: 5 }).map((nodes) => nodes.join(""));
}

const structuredTemplate = templateBody(3, { context: "root", inLoop: false, params: [] });

function block(helper: string, argument: string, body: string, otherwise: string | null, standalone: boolean): string {
  const nl = standalone ? "\n" : "";
  const inverse = otherwise === null ? "" : `${nl}{{else}}${nl}${otherwise}`;
  return `${nl}{{#${helper} ${argument}}}${nl}${body}${inverse}${nl}{{/${helper}}}${nl}`;
}

async function ourRender(text: string, ctx: RenderContext): Promise<string | SystemPromptError> {
  try {
    const template = await SystemPromptTemplate.parse(MAIN, memoryLoader({ [MAIN]: text, [PART]: PART_TEXT }));
    return template.renderInstruction(ctx);
  } catch (error) {
    if (SystemPromptError.is(error)) return error;
    throw error;
  }
}

/** Templates compared with Handlebars: 2,000 in the deep run (INSOMNIA_DEEP_TESTS=1). */
const RUNS = propertyRuns(100, 2000);

describe("compileRenderer", () => {
  it("renders_every_checked_template_exactly_as_handlebars_does", async () => {
    let compared = 0;
    let rejected = 0;
    let dataNamedParams = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ arbitrary: structuredTemplate, weight: 3 }, { arbitrary: atomTemplate, weight: 1 }),
        fc.constantFrom(...CONTEXTS),
        async (text, ctx) => {
          const ours = await ourRender(text, ctx);
          const dataNamed = namesParamLikeData(text);
          if (ours instanceof SystemPromptError) {
            expect(ours.phase).toBe("parse");
            if (dataNamed) {
              // Refused, not rendered differently: Handlebars would read @index & co. as the parameter.
              expect(ours.problems.some((p) => p.code === "FORBIDDEN" && p.detail.includes("block parameter"))).toBe(
                true,
              );
              dataNamedParams++;
            }
            rejected++;
            return;
          }
          compared++;
          expect(ours).toBe(handlebarsRender(text, ctx));
          expect(dataNamed).toBe(false);
        },
      ),
      { numRuns: RUNS, seed: 0x5eed },
    );
    // Not vacuous: most generated templates pass the checker and are compared, some do not,
    // and some name a block parameter like an @variable.
    expect(compared).toBeGreaterThan(0.6 * RUNS);
    expect(rejected).toBeGreaterThan(0.12 * RUNS);
    expect(dataNamedParams).toBeGreaterThan(0.07 * RUNS);
  });

  it("resolves_names_like_handlebars_in_nested_blocks", async () => {
    const text = [
      "{{#each tools as |tool i|}}",
      "{{#each scope.readable as |path|}}{{tool}}@{{path}} {{i}}/{{@index}}{{#if @first}} first{{/if}}{{#if @last}} last{{/if}};{{/each}}",
      "{{#with scope as |s|}}[{{@index}} {{s.summary}} {{cwd}} {{this.summary}}]{{/with}}",
      "{{/each}}",
      "{{#each tools}}{{#unless @first}}, {{/unless}}{{.}}={{@key}}{{/each}}",
      "{{#with scope}}{{#each writable}}{{this}} in {{cwd}}{{/each}}{{/with}}",
      "{{#each tools as |this_one thisIndex|}}{{this_one}}={{thisIndex}} {{/each}}",
    ].join("\n");
    for (const ctx of CONTEXTS) expect(await ourRender(text, ctx)).toBe(handlebarsRender(text, ctx));
    expect(await ourRender(text, CONTEXTS[0] as RenderContext)).toContain("grep@/repo 0/0 first;grep@/docs 0/1 last;");
  });

  it("refuses_block_parameters_that_handlebars_reads_instead_of_an_at_variable", async () => {
    const ctx = CONTEXTS[0] as RenderContext;
    const raw = (text: string) => {
      const hb = Handlebars.create();
      hb.registerHelper("join", (list: unknown[]) => list.map(String).join(", "));
      return hb.compile(text, HANDLEBARS_OPTIONS)(dataOf(ctx));
    };
    const pairs: [string, string][] = [
      ["{{#each tools as |index|}}{{@index}},{{/each}}", "{{#each tools as |tool|}}{{@index}},{{/each}}"],
      ["{{#each tools as |first|}}{{@first}},{{/each}}", "{{#each tools as |tool|}}{{@first}},{{/each}}"],
      ["{{#each tools as |t last|}}{{@last}},{{/each}}", "{{#each tools as |t n|}}{{@last}},{{/each}}"],
      ["{{#each tools as |key|}}{{@key}},{{/each}}", "{{#each tools as |tool|}}{{@key}},{{/each}}"],
    ];
    for (const [named, renamed] of pairs) {
      const ours = await ourRender(named, ctx);
      expect([named, SystemPromptError.is(ours) ? ours.code : ours]).toEqual([named, "FORBIDDEN"]);
      // What the refusal avoids: in Handlebars the name changes what @index & co. print.
      expect(raw(named)).not.toBe(raw(renamed));
      expect(await ourRender(renamed, ctx)).toBe(raw(renamed));
    }
  });

  it("prints_two_values_in_a_row_each_as_text", async () => {
    // Handlebars 4.7 prints "1" here (it adds true and 0); the renderer prints what is written.
    expect(await ourRender("{{#each tools}}{{@first}}{{@key}} {{/each}}", CONTEXTS[0] as RenderContext)).toBe(
      "true0 false1 false2 ",
    );
  });

  it("never_reads_the_prototype_even_for_a_name_the_checker_would_refuse", () => {
    // A second layer under the checker: only own properties of the data are ever read.
    const ast = parseTemplateText(
      "[{{constructor}}][{{scope.__proto__}}][{{toString}}][{{scope.readable.length}}][{{cwd}}]",
    );
    const render = compileRenderer(ast, MAIN, []);
    const budget = new RenderBudget({ maxOutputBytes: 1024, maxSteps: 100 }, MAIN, () => undefined);
    const root = Object.freeze({ cwd: "/repo", scope: Object.freeze({ readable: Object.freeze(["/repo"]) }) });
    // (`length` is an array's own property, which Handlebars reads too; the checker refuses it.)
    expect(render({ budget, root, include: () => "" })).toBe("[][][][1][/repo]");
  });

  it("indents_a_standalone_include_like_handlebars", async () => {
    const text = "Intro\n    {{> part}}\n\t{{> part}}\nafter {{> part}} inline\n";
    for (const ctx of CONTEXTS) expect(await ourRender(text, ctx)).toBe(handlebarsRender(text, ctx));
    expect(await ourRender(text, CONTEXTS[0] as RenderContext)).toContain("Intro\n    P /repo\n    - grep\n");
  });
});
