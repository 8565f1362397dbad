import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BUILTIN_PROMPTS_DIR } from "./builtin-prompts-dir.ts";
import { KNOWN_SHA256_FILE, knownSha256, useKnownSha256File } from "./known-sha256.ts";
import { PromptLoader } from "./prompt-loader.ts";
import { sha256Hex } from "./sha256.ts";

const native = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

afterEach(() => useKnownSha256File(join(BUILTIN_PROMPTS_DIR, KNOWN_SHA256_FILE)));

describe("known sha256", () => {
  it("every_builtin_prompt_has_the_digest_of_its_loaded_text", async () => {
    const names = readdirSync(BUILTIN_PROMPTS_DIR, { recursive: true })
      .map(String)
      .filter((name) => name.endsWith(".md"));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const loaded = await new PromptLoader().load(`$insomnia/${name.slice(0, -".md".length)}`);
      expect(knownSha256(loaded.text), name).toBe(native(loaded.text));
      expect(loaded.sha256, name).toBe(native(loaded.text));
    }
  });

  it("a_text_the_build_did_not_see_is_hashed", async () => {
    const { text } = await new PromptLoader().load("$insomnia/default");
    const edited = `${text} `;
    expect(knownSha256(edited)).toBeUndefined();
    expect(sha256Hex(edited)).toBe(native(edited));
  });

  it("a_missing_or_damaged_table_only_means_hashing", () => {
    const dir = mkdtempSync(join(tmpdir(), "known-sha256-"));
    try {
      useKnownSha256File(join(dir, "absent.json"));
      expect(knownSha256("x")).toBeUndefined();
      expect(sha256Hex("x")).toBe(native("x"));
      const file = join(dir, KNOWN_SHA256_FILE);
      for (const content of ["{not json", "[]", '{"prompts":{}}', '{"prompts":[null,{"text":"x","sha256":"nope"}]}']) {
        writeFileSync(file, content);
        useKnownSha256File(file);
        expect(knownSha256("x"), content).toBeUndefined();
        expect(sha256Hex("x"), content).toBe(native("x"));
      }
      writeFileSync(file, JSON.stringify({ prompts: [{ text: "x", sha256: native("x") }] }));
      useKnownSha256File(file);
      expect(knownSha256("x")).toBe(native("x"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
