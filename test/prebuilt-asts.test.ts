import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

// The build output of @insomnia/template (run after `turbo run build`): dist/prebuilt-asts.json
// must hold, for every builtin prompt the prompt-loader ships, exactly the AST Handlebars
// parses from it, under the installed Handlebars release.

const ROOT = join(import.meta.dirname, "..");
const require = createRequire(join(ROOT, "packages", "template", "package.json"));

describe("prebuilt ASTs of the builtin prompts", () => {
  it("cover_every_builtin_prompt_with_the_ast_handlebars_parses", async () => {
    const loaderDist = pathToFileURL(join(ROOT, "packages", "prompt-loader", "dist", "index.js")).href;
    const { PromptLoader, BUILTIN_PROMPTS_DIR } = (await import(
      loaderDist
    )) as typeof import("../packages/prompt-loader/src/index.ts");
    const Handlebars = require("handlebars") as typeof import("handlebars");
    const table = JSON.parse(
      readFileSync(join(ROOT, "packages", "template", "dist", "prebuilt-asts.json"), "utf8"),
    ) as {
      handlebars: string;
      prompts: { text: string; ast: unknown }[];
    };
    expect(table.handlebars).toBe(Handlebars.VERSION);
    const names = readdirSync(BUILTIN_PROMPTS_DIR, { recursive: true })
      .map(String)
      .filter((name) => name.endsWith(".md"));
    expect(names).toContain("default.md");
    const loader = new PromptLoader();
    for (const name of names) {
      const { text } = await loader.load(`$insomnia/${name.split(/[\\/]/).join("/").slice(0, -3)}`);
      const prebuilt = table.prompts.find((prompt) => prompt.text === text);
      expect(prebuilt?.ast, name).toEqual(JSON.parse(JSON.stringify(Handlebars.parse(text))));
    }
    expect(table.prompts).toHaveLength(names.length);
  });
});
