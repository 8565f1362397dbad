import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileChecked, COMPILE_OPTIONS, createFrame, parseTemplateText } from "./handlebars-env.ts";
import type { HbsProgram } from "./handlebars-ast.ts";

const require = createRequire(import.meta.url);
// The package's main entry, which handlebars-env.ts deliberately does not load.
const Main = require("handlebars") as typeof import("handlebars");
const Bundled = require("handlebars/dist/handlebars.js") as typeof import("handlebars");

const DATA = {
  date: "2026-11-30",
  time: "16:37:00",
  datetime: "2026-11-30T16:37:00Z",
  cwd: "/repo",
  scope: { readable: ["/repo", "/docs"], writable: ["/repo"], summary: "S" },
  tools: ["read_file", "write_file"],
};
const join = (list: unknown, separator: unknown): string => (list as unknown[]).join(typeof separator === "string" ? separator : ", ");

/** Renders with the main entry's own compile and the same options. */
function renderWithMain(text: string): string {
  const env = Main.create();
  env.registerHelper("join", join);
  env.registerPartial("part", "P{{cwd}}");
  return env.compile(text, { ...COMPILE_OPTIONS })(DATA);
}

function renderWithOurs(text: string): string {
  const partial = compileChecked(parseTemplateText("P{{cwd}}"));
  // Handlebars' own if/each/with/unless, as the main entry uses them (renders pass counting ones).
  const helpers = { ...Bundled.create().helpers, join };
  return compileChecked(parseTemplateText(text))(DATA, { helpers, partials: { part: partial } });
}

function outcome(render: () => string): string {
  try {
    return `ok ${render()}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

const ATOMS = [
  "{{cwd}}", "{{date}}", "{{#if tools}}", "{{else}}", "{{/if}}", "{{#each tools}}", "{{@index}}", "{{this}}", "{{@last}}",
  "{{/each}}", "{{~cwd~}}", "{{!-- c --}}", "{{! c}}", "\n", "  ", "text", "{{> part}}", "{{join tools \", \"}}",
  "{{#with scope}}", "{{summary}}", "{{/with}}", "{{{cwd}}}", "\\{{cwd}}", "é\u2028", "{{#unless tools}}", "{{/unless}}",
  "{{else if tools}}", "{{join scope.readable}}", "😀", "{{nope}}", "{{",
];

describe("the Handlebars build", () => {
  it("is_the_same_release_as_the_main_entry", () => {
    expect(Bundled.VERSION).toBe(Main.VERSION);
    expect(createFrame({ a: 1 })).toMatchObject({ a: 1 });
  });

  it("parses_to_the_same_ast_and_renders_the_same_as_the_main_entry", () => {
    const builtin = readFileSync(new URL("../../../resources/prompts/default.md", import.meta.url), "utf8");
    expect(parseTemplateText(builtin)).toEqual(Main.parse(builtin) as unknown as HbsProgram);
    expect(renderWithOurs(builtin)).toBe(renderWithMain(builtin));
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ATOMS), { minLength: 1, maxLength: 14 }), (atoms) => {
        const text = atoms.join("");
        const parsed = outcome(() => JSON.stringify(parseTemplateText(text)));
        expect(parsed).toBe(outcome(() => JSON.stringify(Main.parse(text))));
        if (parsed.startsWith("ok")) expect(outcome(() => renderWithOurs(text))).toBe(outcome(() => renderWithMain(text)));
      }),
      { numRuns: 2000 },
    );
  });
});
