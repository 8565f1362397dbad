import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HbsProgram } from "./handlebars-ast.ts";
import { lexTokens, type Token } from "./handlebars-lexer.ts";
import { parseTemplateText, parseTokens } from "./handlebars-parser.ts";
import { TEMPLATE_ATOMS } from "./__fixtures__/template-atoms.ts";
import { runs } from "./__fixtures__/test-runs.ts";

// The package's main entry, which handlebars-parser.ts deliberately does not load.
const Main = createRequire(import.meta.url)("handlebars") as typeof import("handlebars");

function outcome(parse: () => unknown, withoutLoc = false): string {
  try {
    return `ok ${JSON.stringify(parse(), (key, value) => (withoutLoc && key === "loc" ? undefined : value))}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

/** Every `loc` of an AST, in order. */
function locs(ast: unknown): string {
  const found: unknown[] = [];
  JSON.stringify(ast, (key, value) => {
    if (key === "loc") found.push(value);
    return value;
  });
  return JSON.stringify(found);
}

describe("handlebars-parser", () => {
  it("parses_to_the_same_ast_and_errors_as_the_main_entry", () => {
    const builtin = readFileSync(new URL("../../../resources/prompts/default.md", import.meta.url), "utf8");
    expect(parseTemplateText(builtin)).toEqual(Main.parse(builtin) as unknown as HbsProgram);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TEMPLATE_ATOMS), { minLength: 1, maxLength: 14 }), (atoms) => {
        const text = atoms.join("");
        // Parsing replayed tokens gives what parsing the text gives, errors included.
        const tokens: Token[] = [];
        if (lexTokens(text, (token) => tokens.push(token) > 0).kind === "eof") {
          expect(outcome(() => parseTokens(text, tokens))).toBe(outcome(() => parseTemplateText(text)));
        }
        if (!/[\u2028\u2029]/.test(text)) {
          expect(outcome(() => parseTemplateText(text))).toBe(outcome(() => Main.parse(text)));
          return;
        }
        // Handlebars' own columns are short after a U+2028 or U+2029 that follows a line
        // break (line-separators.ts): the positions are those of the same text with each
        // separator an ordinary whitespace character, everything else is Handlebars' AST.
        const whole = outcome(() => parseTemplateText(text), true);
        expect(whole).toBe(outcome(() => Main.parse(text), true));
        if (whole.startsWith("error")) return;
        const ours = outcome(() => locs(parseTemplateText(text)));
        expect(ours).toBe(outcome(() => locs(Main.parse(text.replace(/[\u2028\u2029]/g, "\u00a0")))));
      }),
      { numRuns: runs(300, 2000) },
    );
  });
});
