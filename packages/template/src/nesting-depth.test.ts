import { describe, expect, it } from "vitest";
import { findTooDeepNesting, MAX_NESTING_DEPTH } from "./nesting-depth.ts";
import { loadHandlebarsParser } from "./handlebars-parser.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

const nest = (open: string, close: string, depth: number, body = "x"): string =>
  open.repeat(depth) + body + close.repeat(depth);

describe("findTooDeepNesting", () => {
  it("accepts_nesting_up_to_the_limit", () => {
    expect(findTooDeepNesting(nest("{{#if tools}}", "{{/if}}", MAX_NESTING_DEPTH))).toBeUndefined();
    expect(findTooDeepNesting("{{#each tools}}{{/each}}".repeat(5000))).toBeUndefined();
    expect(findTooDeepNesting(`${"(".repeat(500)} plain text {{cwd}}`)).toBeUndefined();
  });

  it("points_at_the_first_block_past_the_limit", () => {
    const text = `a\n${nest("{{#with scope}}", "{{/with}}", MAX_NESTING_DEPTH + 1)}`;
    expect(findTooDeepNesting(text)).toEqual({ line: 2, column: MAX_NESTING_DEPTH * 15 + 1 });
  });

  it("counts_else_if_chains_and_subexpressions_as_nesting", () => {
    expect(findTooDeepNesting(`{{#if tools}}${"{{else if cwd}}".repeat(MAX_NESTING_DEPTH)}{{/if}}`)).toMatchObject({
      line: 1,
    });
    expect(
      findTooDeepNesting(`{{join ${"(a ".repeat(MAX_NESTING_DEPTH + 1)}${")".repeat(MAX_NESTING_DEPTH + 1)}}}`),
    ).toMatchObject({
      line: 1,
    });
    // Whitespace before `else` does not hide a chain link.
    const spaced = `{{#if cwd}}a${"{{               else if cwd}}b".repeat(MAX_NESTING_DEPTH + 50)}{{/if}}`;
    expect(findTooDeepNesting(spaced)).toMatchObject({ line: 1 });
    expect(
      findTooDeepNesting(`{{#if cwd}}a${"{{~\n\t else if cwd}}b".repeat(MAX_NESTING_DEPTH + 1)}{{/if}}`),
    ).toMatchObject({ line: MAX_NESTING_DEPTH });
    // A chain closes with its block: siblings after it start from the outer depth again.
    const chains = `{{#if tools}}${"{{else if cwd}}".repeat(60)}{{/if}}`.repeat(10);
    expect(findTooDeepNesting(chains)).toBeUndefined();
  });
});
