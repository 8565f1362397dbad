import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import type { LoadedPrompt, PromptRef } from "@insomnia/prompt-loader";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makePromptDirs, type PromptDirs } from "./__fixtures__/prompt-dirs.ts";
import { TEMPLATE_ATOMS } from "./__fixtures__/template-atoms.ts";
import { DEEP_TESTS, propertyRuns } from "../../../test/support/property-runs.ts";
import { checkTemplateProblems } from "./check-template.ts";
import { loadHandlebarsParser, parseTemplateText } from "./handlebars-parser.ts";
import { countLeafStatements } from "./pre-parse-scan.ts";
import {
  clearTemplateCache,
  SystemPromptError,
  SystemPromptTemplate,
  templateCacheStats,
  type ParseOptions,
  type TemplateLoader,
} from "./index.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

// The findings of issue 27 about the template: caps enforced as the work is done, a
// cache bounded by the memory it holds, and positions that match what an editor shows.

let p: PromptDirs;
beforeEach(() => {
  p = makePromptDirs();
  clearTemplateCache();
});
afterEach(() => {
  clearTemplateCache();
  p.cleanup();
});

async function parseError(ref: string, loader: TemplateLoader, options?: ParseOptions): Promise<SystemPromptError> {
  try {
    await SystemPromptTemplate.parse(ref, loader, options);
  } catch (error) {
    if (SystemPromptError.is(error)) return error;
    throw error;
  }
  throw new Error(`parsing ${ref} did not fail`);
}

/** A loader over in-memory texts (any characters, as a custom loader may return), counting its loads. */
function memoryLoader(texts: Readonly<Record<string, string>>): TemplateLoader & { loads: string[] } {
  const loads: string[] = [];
  return {
    loads,
    async load(ref: PromptRef): Promise<LoadedPrompt> {
      const text = texts[ref.canonical];
      if (text === undefined) throw new Error(`no file for ${ref.canonical}`);
      loads.push(ref.canonical);
      return { ref, text, file: `/mem/${ref.canonical}.md`, sha256: "" };
    },
  };
}

/** `v8`'s gc, exposed at run time (vitest's workers do not run with --expose-gc). */
function gc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("issue 27: caps are enforced as the work is done", () => {
  it("the_expansion_cap_is_crossed_while_the_include_tree_is_loaded", async () => {
    // The shape at a smaller scale: 160 includes of files that are each within the
    // per-file cap, whose sum crosses the expansion cap at the tenth include.
    const texts: Record<string, string> = {
      "$workspace/main": Array.from({ length: 160 }, (_, i) => `{{> f${i + 1}}}`).join("\n"),
    };
    for (let i = 1; i <= 160; i++) texts[`$workspace/f${i}`] = `${i}${"{{#if cwd}}{{/if}}".repeat(99)}`;
    const loader = memoryLoader(texts);
    const error = await parseError("$workspace/main", loader, { maxExpandedNodes: 1000, maxFileStatements: 400 });
    expect([error.code, error.ref, error.line, error.column]).toEqual([
      "EXPANSION_TOO_LARGE",
      "$workspace/main",
      10,
      1,
    ]);
    expect(error.message).toContain("over the limit of 1000");
    // The root and the ten files up to the crossing; not the 150 after it.
    expect(loader.loads).toHaveLength(11);
    // Counted by their tokens, none of the ten was parsed (parsing is most of the cost): only the root is cached.
    expect(templateCacheStats().size).toBe(1);
  });

  it("a_leaf_counted_by_its_tokens_has_the_statements_its_parse_has", () => {
    // The expansion count takes a leaf's statements from its tokens before it is parsed; the
    // parse must agree, or the tree is loaded again parsing each file at once (never seen).
    const leafAtoms = TEMPLATE_ATOMS.filter((atom) => !atom.includes(">"));
    const fixed = [
      "{{#if cwd}}a{{else if tools}}b{{else}}c{{/if}}",
      "{{^if cwd}}x{{/if}}{{#if cwd}}{{^}}y{{/if}}",
      "{{!-- }} --}}\n  {{#each tools}}\n{{this}}\n  {{/each}}\n",
      "a\\{{cwd}}b{{{cwd}}}\r\nc\u2028{{cwd}}",
    ];
    let compared = 0;
    const compare = (text: string): void => {
      let ast: ReturnType<typeof parseTemplateText>;
      try {
        ast = parseTemplateText(text);
      } catch {
        return;
      }
      const { checked, problems } = checkTemplateProblems(ast, { ref: "$workspace/leaf" }, (name) => name);
      if (problems.length > 0) return;
      compared++;
      expect(countLeafStatements(text, 1_000_000)).toBe(checked.ownNodes);
    };
    for (const text of fixed) compare(text);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...leafAtoms), { minLength: 1, maxLength: 10 }), (atoms) =>
        compare(atoms.join("")),
      ),
      // About one random leaf in fourteen parses cleanly: the quick run's 500 from a fixed seed compare 47, the
      // deep run's 5,000 random ones about 350, so the floor below always holds.
      { numRuns: propertyRuns(500, 5000), ...(DEEP_TESTS ? {} : { seed: 0x27c0 }) },
    );
    expect(compared).toBeGreaterThan(20);
  });

  it("a_leaf_that_does_not_parse_is_reported_where_it_is_included_as_before", async () => {
    // Leaves are parsed before the frame that counted them goes on to anything but counting,
    // so a syntax error in one still comes before a later include that fails to load.
    const loader = memoryLoader({
      "$workspace/main": "{{> a}}\n{{> b}}\n{{> missing}}\n",
      "$workspace/a": "fine",
      "$workspace/b": "one\n{{#if cwd}}never closed",
    });
    const error = await parseError("$workspace/main", loader);
    expect([error.code, error.ref, error.line]).toEqual(["SYNTAX", "$workspace/b", 2]);
    expect(error.problems).toHaveLength(1);
  });

  it("stray_closers_count_toward_the_statement_cap", async () => {
    // 1 MiB of `{{/if}}`: nothing opens a block, so each closer is a statement of its own
    // (a syntax error) and the file is refused after the first 10,001 of them.
    const text = "{{/if}}".repeat(Math.floor((1024 * 1024) / 7));
    const loader = memoryLoader({ "$workspace/main": text });
    const error = await parseError("$workspace/main", loader);
    expect([error.code, error.line, error.column]).toEqual(["EXPANSION_TOO_LARGE", 1, 1]);
    // Closers of open blocks are not statements: 600 blocks are 600 statements, not 1,200.
    const blocks = memoryLoader({ "$workspace/main": "{{#if cwd}}{{/if}}".repeat(600) });
    await expect(
      SystemPromptTemplate.parse("$workspace/main", blocks, { maxFileStatements: 1000 }),
    ).resolves.toBeDefined();
    // Under the cap a stray closer is still the syntax error it is.
    const one = await parseError("$workspace/main", memoryLoader({ "$workspace/main": "a\n {{/if}}" }));
    expect([one.code, one.line, one.column, one.detail]).toEqual([
      "SYNTAX",
      2,
      2,
      "syntax error: {{/if}} closes a block that was never opened",
    ]);
  });
});

describe("issue 27: the template cache is bounded by the memory it holds", () => {
  it("distinct_dense_files_hold_less_heap_than_the_cache_bound", async () => {
    // Dense files (every byte a statement) are the worst case per byte of text: about
    // 290 statements in 2 KiB. 300 of them held about 87 MB before the cache measured memory (292 KB each).
    const collect = gc();
    const texts: Record<string, string> = {};
    for (let i = 0; i < 300; i++) texts[`$workspace/f${i}`] = `${i}\n${"{{cwd}}".repeat(292)}`;
    const loader = memoryLoader(texts);
    collect();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 300; i++) await SystemPromptTemplate.parse(`$workspace/f${i}`, loader);
    collect();
    const held = process.memoryUsage().heapUsed - before;
    const stats = templateCacheStats();
    expect(stats.bytes).toBeLessThanOrEqual(stats.maxBytes);
    expect(stats.size).toBeLessThan(300);
    expect(held).toBeLessThan(stats.maxBytes);
  });

  it("the_cache_estimate_is_above_the_heap_each_kind_of_statement_holds", async () => {
    // The bound is only as good as the estimate: per kind of statement, 2 KiB files dense
    // with it hold less heap per cached file than the cache counts for them. A file of plain
    // text holds a few KiB, within the heap's noise for 20 files, so that kind caches 400.
    const collect = gc();
    const kinds = [
      "{{cwd}}",
      "a{{cwd}}",
      "{{#if cwd}}{{/if}}",
      "{{#each tools}}{{this}}{{/each}}",
      '{{join tools ", "}}',
      "{{#with scope}}{{summary}}{{/with}}",
      "{{> inc}}",
      "plain text, no statement",
    ];
    const measured: [string, number, number][] = [];
    for (const [k, unit] of kinds.entries()) {
      const files = unit.includes("{{") ? 20 : 400;
      const texts: Record<string, string> = { "$workspace/inc": "x" };
      for (let i = 0; i < files; i++)
        texts[`$workspace/k${k}f${i}`] = `${i}\n${unit.repeat(Math.floor(2040 / unit.length))}`;
      const loader = memoryLoader(texts);
      clearTemplateCache();
      collect();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < files; i++) await SystemPromptTemplate.parse(`$workspace/k${k}f${i}`, loader);
      collect();
      const held = process.memoryUsage().heapUsed - before;
      const stats = templateCacheStats();
      measured.push([unit, Math.round(held / stats.size), Math.round(stats.bytes / stats.size)]);
    }
    for (const [unit, heap, estimate] of measured) expect([unit, heap < estimate]).toEqual([unit, true]);
  });
});

describe("issue 27: positions count what an editor shows", () => {
  it("a_line_separator_on_a_line_does_not_shift_later_columns", async () => {
    for (const separator of ["\u2028", "\u2029"]) {
      const loader = memoryLoader({ "$workspace/main": `first\nab${separator}cd {{nope}}` });
      const error = await parseError("$workspace/main", loader);
      expect([error.code, error.line, error.column]).toEqual(["UNKNOWN_VARIABLE", 2, 9]);
      const unclosed = memoryLoader({ "$workspace/main": `x\n${separator}${separator} {{#if cwd}}` });
      expect(await parseError("$workspace/main", unclosed)).toMatchObject({
        code: "SYNTAX",
        line: 2,
        column: 4,
        detail: "syntax error: {{#if}} is never closed; add {{/if}}",
      });
    }
    // The separator is text: it is rendered as it is.
    const ok = memoryLoader({ "$workspace/main": "a\u2028{{cwd}}\u2029b" });
    const template = await SystemPromptTemplate.parse("$workspace/main", ok);
    expect(template.renderInstruction(context())).toBe("a\u2028/repo\u2029b");
  });

  it("a_lone_cr_from_a_custom_loader_does_not_garble_syntax_messages", async () => {
    for (const newline of ["\r", "\r\n", "\n"]) {
      const text = ["Intro", "{{#if cwd}}", "  {{#each tools}}", "x", "{{/if}}"].join(newline);
      const error = await parseError("$workspace/main", memoryLoader({ "$workspace/main": text }));
      expect([newline, error.code, error.line, error.column, error.detail]).toEqual([
        newline,
        "SYNTAX",
        5,
        1,
        "syntax error: {{/if}} does not close {{#each}} opened at 3:3; close it with {{/each}}",
      ]);
      const unclosed = ["a", "b", "{{#if cwd}}", "c"].join(newline);
      expect(await parseError("$workspace/main", memoryLoader({ "$workspace/main": unclosed }))).toMatchObject({
        line: 3,
        column: 1,
        detail: "syntax error: {{#if}} is never closed; add {{/if}}",
      });
    }
  });
});

/** The outcome of parsing `text` as the only file: the error's code, position and detail, or "ok". */
async function outcomeOf(text: string): Promise<string> {
  try {
    await SystemPromptTemplate.parse("$workspace/main", memoryLoader({ "$workspace/main": text }));
    return "ok";
  } catch (error) {
    if (!SystemPromptError.is(error)) throw error;
    return `${error.code} ${error.line}:${error.column} ${error.detail}`;
  }
}

describe("issue 27: no input leaves a garbled message", () => {
  it("any_line_break_gives_the_message_and_position_lf_gives", async () => {
    // CRLF and a lone CR are line breaks as LF is: the same template with either gets the
    // same outcome, position and wording (a tag read at a wrong offset shows up here).
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...TEMPLATE_ATOMS, "\n", "\n", "{{#if cwd}}\n"), { minLength: 1, maxLength: 14 }),
        fc.constantFrom("\r", "\r\n"),
        async (atoms, newline) => {
          const text = atoms.join("");
          expect(await outcomeOf(text.replaceAll("\n", newline))).toBe(await outcomeOf(text));
        },
      ),
      { numRuns: propertyRuns(200, 3000) },
    );
  });
});

function context() {
  return {
    now: new Date(Date.UTC(2026, 10, 30, 16, 37, 0)),
    cwd: "/repo",
    scope: { readable: ["/repo"], writable: ["/repo"], summary: "Readable:\n  - /repo" },
    tools: ["read_file"],
  };
}
