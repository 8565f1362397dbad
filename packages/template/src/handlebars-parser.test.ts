import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HbsProgram } from "./handlebars-ast.ts";
import { lexTokens, type Token } from "./handlebars-lexer.ts";
import { loadHandlebarsParser, parseTemplateText, parseTokens } from "./handlebars-parser.ts";
import { TEMPLATE_ATOMS } from "./__fixtures__/template-atoms.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

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

/** The position Handlebars appends to an exception's message (`- line:column`). */
const POSITION = / - \d+:\d+$/;

/** A counterexample fast-check found (seed 1273268538): a block mismatch after a U+2028 on line 2. */
const SEPARATOR_BEFORE_A_MISMATCH = ["  {{> part}}\n", "é\u2028", "{{#unless @first}}", "{{~/if~}}"];

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
        // An error's message is Handlebars' own; the position that ends it is one of those.
        const whole = outcome(() => parseTemplateText(text), true);
        const spaced = text.replace(/[\u2028\u2029]/g, "\u00a0");
        expect(whole.replace(POSITION, "")).toBe(outcome(() => Main.parse(text), true).replace(POSITION, ""));
        if (whole.startsWith("error")) {
          expect(POSITION.exec(whole)?.[0]).toBe(POSITION.exec(outcome(() => Main.parse(spaced)))?.[0]);
          return;
        }
        const ours = outcome(() => locs(parseTemplateText(text)));
        expect(ours).toBe(outcome(() => locs(Main.parse(spaced))));
      }),
      { numRuns: propertyRuns(300, 2000), examples: [[SEPARATOR_BEFORE_A_MISMATCH]] },
    );
  });

  it("an_error_after_a_line_separator_on_a_later_line_gives_the_column_an_editor_shows", () => {
    // Line 2 is "é\u2028{{#unless …": `unless` is at column 5 (0-based, as Handlebars counts).
    const text = SEPARATOR_BEFORE_A_MISMATCH.join("");
    expect(outcome(() => parseTemplateText(text))).toBe("error unless doesn't match if - 2:5");
    const tokens: Token[] = [];
    expect(lexTokens(text, (token) => tokens.push(token) > 0)).toEqual({ kind: "eof" });
    expect(outcome(() => parseTokens(text, tokens))).toBe("error unless doesn't match if - 2:5");
    // Handlebars alone ends its column at the separator (jison's `.*`), one short.
    expect(outcome(() => Main.parse(text))).toBe("error unless doesn't match if - 2:4");
  });
});
