import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { HbsProgram } from "./handlebars-ast.ts";
import { parseTemplateText } from "./handlebars-parser.ts";
import { TEMPLATE_ATOMS } from "./__fixtures__/template-atoms.ts";

// The package's main entry, which handlebars-parser.ts deliberately does not load.
const Main = createRequire(import.meta.url)("handlebars") as typeof import("handlebars");

function outcome(parse: () => unknown): string {
  try {
    return `ok ${JSON.stringify(parse())}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

describe("handlebars-parser", () => {
  it("parses_to_the_same_ast_and_errors_as_the_main_entry", () => {
    const builtin = readFileSync(new URL("../../../resources/prompts/default.md", import.meta.url), "utf8");
    expect(parseTemplateText(builtin)).toEqual(Main.parse(builtin) as unknown as HbsProgram);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TEMPLATE_ATOMS), { minLength: 1, maxLength: 14 }), (atoms) => {
        const text = atoms.join("");
        expect(outcome(() => parseTemplateText(text))).toBe(outcome(() => Main.parse(text)));
      }),
      { numRuns: 2000 },
    );
  });
});
