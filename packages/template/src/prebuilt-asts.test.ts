import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { HbsProgram } from "./handlebars-ast.ts";
import { loadHandlebarsParser, parseTemplateText } from "./handlebars-parser.ts";
import { prebuiltAst, usePrebuiltAstsFile, type PrebuiltAsts } from "./prebuilt-asts.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

const { version } = createRequire(import.meta.url)("handlebars/package.json") as { version: string };
const dir = mkdtempSync(join(tmpdir(), "insomnia-prebuilt-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => usePrebuiltAstsFile(undefined));

const TEXT = "Hi {{cwd}}\n{{#each tools as |t|}}\n  - {{t}}\n{{/each}}\n";

function writeTable(name: string, content: string): URL {
  const file = join(dir, name);
  writeFileSync(file, content);
  return pathToFileURL(file);
}

function table(texts: readonly string[], handlebars = version): string {
  return JSON.stringify({
    handlebars,
    prompts: texts.map((text) => ({ text, ast: parseTemplateText(text) })),
  } satisfies PrebuiltAsts);
}

describe("prebuiltAst", () => {
  it("gives_the_ast_handlebars_parses_and_a_fresh_copy_each_time", () => {
    usePrebuiltAstsFile(writeTable("ok.json", table([TEXT, "other {{date}}"])));
    const first = prebuiltAst(TEXT);
    expect(first).toEqual(parseTemplateText(TEXT));
    (first as HbsProgram).body.length = 0;
    expect(prebuiltAst(TEXT)).toEqual(parseTemplateText(TEXT));
    expect(prebuiltAst("other {{date}}")).toEqual(parseTemplateText("other {{date}}"));
    expect(prebuiltAst(`${TEXT} `)).toBeUndefined();
  });

  it("is_unused_when_another_handlebars_release_built_it", () => {
    usePrebuiltAstsFile(writeTable("old.json", table([TEXT], "4.0.0")));
    expect(prebuiltAst(TEXT)).toBeUndefined();
  });

  it("a_missing_or_damaged_table_means_parsing", () => {
    const wrongShapes = [
      `{"handlebars":"${version}","prompts":null}`,
      `{"handlebars":"${version}","prompts":[null,{"text":1},{"text":"${"x"}"}]}`,
    ];
    for (const content of [undefined, "", "{", "null", '{"handlebars":"x"}', ...wrongShapes]) {
      usePrebuiltAstsFile(
        content === undefined ? pathToFileURL(join(dir, "absent.json")) : writeTable("bad.json", content),
      );
      expect([prebuiltAst(TEXT), prebuiltAst("x")], String(content)).toEqual([undefined, undefined]);
    }
  });
});
