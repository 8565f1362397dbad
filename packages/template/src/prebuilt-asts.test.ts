import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { HbsProgram } from "./handlebars-ast.ts";
import { parseTemplateText } from "./handlebars-parser.ts";
import { prebuiltAst, usePrebuiltAstsFile, type PrebuiltAsts } from "./prebuilt-asts.ts";

const { version } = createRequire(import.meta.url)("handlebars/package.json") as { version: string };
const dir = mkdtempSync(join(tmpdir(), "insomnia-prebuilt-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => usePrebuiltAstsFile(undefined));

const TEXT = "Hi {{cwd}}\n{{#each tools as |t|}}\n  - {{t}}\n{{/each}}\n";
const SHA = createHash("sha256").update(TEXT).digest("hex");

function writeTable(name: string, content: string): URL {
  const file = join(dir, name);
  writeFileSync(file, content);
  return pathToFileURL(file);
}

function table(asts: Record<string, HbsProgram>, handlebars = version): string {
  return JSON.stringify({ handlebars, asts } satisfies PrebuiltAsts);
}

describe("prebuiltAst", () => {
  it("gives_the_ast_handlebars_parses_and_a_fresh_copy_each_time", () => {
    usePrebuiltAstsFile(writeTable("ok.json", table({ [SHA]: parseTemplateText(TEXT) })));
    const first = prebuiltAst(SHA);
    expect(first).toEqual(parseTemplateText(TEXT));
    (first as HbsProgram).body.length = 0;
    expect(prebuiltAst(SHA)).toEqual(parseTemplateText(TEXT));
    expect(prebuiltAst("0".repeat(64))).toBeUndefined();
  });

  it("is_unused_when_another_handlebars_release_built_it", () => {
    usePrebuiltAstsFile(writeTable("old.json", table({ [SHA]: parseTemplateText(TEXT) }, "4.0.0")));
    expect(prebuiltAst(SHA)).toBeUndefined();
  });

  it("a_missing_or_damaged_table_means_parsing", () => {
    for (const content of [undefined, "", "{", "null", '{"handlebars":"x"}', `{"handlebars":"${version}","asts":null}`]) {
      usePrebuiltAstsFile(content === undefined ? pathToFileURL(join(dir, "absent.json")) : writeTable("bad.json", content));
      expect(prebuiltAst(SHA), String(content)).toBeUndefined();
    }
  });
});
