import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BUILTIN_PROMPTS_DIR } from "./builtin-prompts-dir.ts";
import { normalizeText } from "./decode-prompt-text.ts";
import { PromptLoader } from "./prompt-loader.ts";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const resources = join(packageDir, "..", "..", "resources", "prompts");

async function mdFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe("BUILTIN_PROMPTS_DIR", () => {
  it("is_the_prompts_directory_of_this_package", () => {
    expect(join(BUILTIN_PROMPTS_DIR)).toBe(join(packageDir, "prompts", "/"));
    expect(new PromptLoader().rootOf("$insomnia")).toBe(join(packageDir, "prompts"));
  });

  // globalSetup copied resources/prompts here, exactly as `build` does for the tarball.
  it("holds_a_copy_of_resources_prompts_and_every_one_loads", async () => {
    const expected = await mdFiles(resources);
    expect(await mdFiles(BUILTIN_PROMPTS_DIR)).toEqual(expected);
    const loader = new PromptLoader();
    for (const name of expected) {
      const loaded = await loader.load(`$insomnia/${name.slice(0, -3).split(/[\\/]/).join("/")}`);
      expect(loaded.text).toBe(normalizeText(await readFile(join(resources, name), "utf8")));
    }
  });
});
