import { describe, expect, it } from "vitest";
import { hasMoreStatementsThan, lexAll, lexTokens } from "./handlebars-lexer.ts";
import { loadHandlebarsParser, parseTemplateText } from "./handlebars-parser.ts";
import { describeSyntaxError, type SyntaxErrorInfo } from "./syntax-error.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

function syntaxError(text: string): SyntaxErrorInfo {
  try {
    parseTemplateText(text);
  } catch (error) {
    return describeSyntaxError(text, error);
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe("describeSyntaxError", () => {
  it("text_ending_in_four_closing_braces_is_located_not_lexed_forever", () => {
    // Handlebars' lexer emits empty tokens forever after a trailing "}}}}"; this used to
    // exhaust the heap (a 9-byte file took the process down).
    for (const text of ["{{x}}}}", "{{cwd}}}}", "{{}}}}", "{{{x}}}}", "{{{{x}}}}"]) {
      const info = syntaxError(text);
      expect(info.line).toBe(1);
      expect(info.column).toBeGreaterThanOrEqual(1);
    }
  });

  it("points_at_the_block_that_is_never_closed", () => {
    expect(syntaxError("a\n  {{#each tools}}\n{{#if cwd}}{{/if}}\n")).toEqual({
      line: 2,
      column: 3,
      message: "{{#each}} is never closed; add {{/each}}",
    });
    expect(syntaxError("{{#if a}}{{#with scope}}{{/with}}").line).toBe(1);
    expect(syntaxError("{{~#if a~}}")).toMatchObject({
      line: 1,
      column: 1,
      message: "{{#if}} is never closed; add {{/if}}",
    });
  });

  it("points_at_a_mismatched_close", () => {
    expect(syntaxError("{{#if a}}\n{{#each b}}\n  {{/if}}\n{{/each}}")).toEqual({
      line: 3,
      column: 3,
      message: "{{/if}} does not close {{#each}} opened at 2:1; close it with {{/each}}",
    });
    expect(syntaxError("{{{{raw}}}} x {{{{/wrong}}}}")).toMatchObject({ line: 1, column: 15 });
  });

  it("points_at_a_close_without_an_open", () => {
    expect(syntaxError("text\n {{/if}}")).toEqual({
      line: 2,
      column: 2,
      message: "{{/if}} closes a block that was never opened",
    });
  });

  it("points_at_the_offending_token", () => {
    expect(syntaxError("ab\n  {{#if x}}{{else}}{{else}}{{/if}}")).toMatchObject({
      line: 2,
      column: 20,
      message: 'unexpected "{{else}}" (expected text, {{/…}})',
    });
    expect(syntaxError("hello {{}} x")).toMatchObject({
      line: 1,
      column: 9,
      message: 'unexpected "}}" (expected a name, a string, a number, an @variable)',
    });
    expect(syntaxError("x {{foo bar=}}")).toMatchObject({ line: 1, column: 13 });
  });

  it("points_at_an_unclosed_mustache_or_comment", () => {
    expect(syntaxError("x\n  {{foo")).toEqual({ line: 2, column: 3, message: "this {{ is never closed; add }}" });
    expect(syntaxError("x {{!-- no end")).toMatchObject({ line: 1, column: 3 });
  });

  it("a_long_run_of_unclosed_literal_segments_is_lexed_once_not_once_per_tag", () => {
    // Each `[` with no `]` after it made the lexer scan to the end of the file, and the
    // locator lexed on past every one of them: quadratic in the file (issue 19).
    // Handlebars' parser stops at the first INVALID token, and so does the lexer now.
    const text = "{{[".repeat(40_000);
    const { tokens } = lexAll(text);
    expect(tokens.map((t) => t.name)).toEqual(["OPEN", "INVALID"]);
    expect(syntaxError(text)).toEqual({ line: 1, column: 1, message: "this {{ is never closed; add }}" });
    // The same for the other rules that can fail only at the end of the file.
    for (const [tag, names] of [
      ["{{!", ["OPEN", "INVALID"]],
      ["{{#[}}", ["OPEN_BLOCK", "INVALID"]],
    ] as const) {
      expect([tag, lexAll(tag.repeat(40_000)).tokens.map((t) => t.name)]).toEqual([tag, names]);
    }
  });

  it("the_1_mib_run_of_unclosed_literal_segments_is_located", () => {
    // The size of the largest file the loader reads; quadratic, this never finished.
    const text = "{{[".repeat(349_525);
    expect(text.length).toBeLessThanOrEqual(1024 * 1024);
    expect(syntaxError(text)).toEqual({ line: 1, column: 1, message: "this {{ is never closed; add }}" });
  });

  it("counting_statements_lexes_no_further_than_the_one_past_the_cap", () => {
    const text = `${"{{cwd}}".repeat(149_000)}{{#if}}`;
    let lexed = 0;
    lexTokens(text, () => ++lexed < 100);
    expect(lexed).toBe(100);
    expect(hasMoreStatementsThan(text, 10_000)).toBe(true);
    expect(hasMoreStatementsThan("a{{cwd}}b{{! c }}{{#if x}}{{else if y}}{{/if}}", 6)).toBe(false);
    expect(hasMoreStatementsThan("a{{cwd}}b{{! c }}{{#if x}}{{else if y}}{{/if}}", 5)).toBe(true);
  });
});
