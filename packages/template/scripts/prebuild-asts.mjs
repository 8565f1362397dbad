// Writes dist/prebuilt-asts.json: every builtin prompt's text, as the prompt-loader reads
// it, with its Handlebars AST (see src/prebuilt-asts.ts). Run by
// `build` after tsdown; a builtin prompt that does not parse fails the build.
import { readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, sep } from "node:path";
import { BUILTIN_PROMPTS_DIR, PromptLoader } from "@insomnia/prompt-loader";

const require = createRequire(import.meta.url);
const { parse } = require("handlebars/dist/cjs/handlebars/compiler/base.js");
const { version } = require("handlebars/package.json");

const loader = new PromptLoader();
const prompts = [];
const files = readdirSync(BUILTIN_PROMPTS_DIR, { recursive: true }).filter((name) => String(name).endsWith(".md"));
for (const name of files.map(String).sort()) {
  const ref = `$insomnia/${name.split(sep).join("/").slice(0, -".md".length)}`;
  try {
    const { text } = await loader.load(ref);
    // Such a prompt is parsed at run time, where its columns are fixed (src/line-separators.ts).
    if (/[\u2028\u2029]/.test(text)) continue;
    prompts.push({ text, ast: parse(text) });
  } catch (error) {
    throw new Error(`builtin prompt ${ref} (${join(BUILTIN_PROMPTS_DIR, name)}) cannot be prebuilt: ${error.message}`);
  }
}
const out = new URL("../dist/prebuilt-asts.json", import.meta.url);
writeFileSync(out, `${JSON.stringify({ handlebars: version, prompts })}\n`);
console.log(`prebuilt ASTs of ${files.length} builtin prompt(s) for handlebars ${version}`);
