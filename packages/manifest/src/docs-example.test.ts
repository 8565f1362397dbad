import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parseManifestLayer } from "./parse-manifest-layer.ts";
import { resolveManifest } from "./resolve-manifest.ts";
import { knownKeysAt } from "./schema.ts";

const docs = readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "manifest.md"), "utf8");

describe("docs/manifest.md", () => {
  test("full_example_is_a_valid_manifest", () => {
    const block = /<!-- manifest-example[^>]*-->\n```yaml\n([\s\S]*?)```/.exec(docs)?.[1];
    expect(block).toBeDefined();
    const manifest = resolveManifest(parseManifestLayer(block!, "docs/manifest.md"), { cwd: "/somewhere" });
    expect(manifest.pod).toEqual({ name: "reviewer", pwd: "/srv/checkouts/shop" });
    expect(manifest.worker).toEqual({
      instruction: "$workspace/review",
      max_tokens: 4096,
      max_turns: 20,
      temperature: 0.2,
      tools: ["list_dir", "read_file", "run_command"],
      compact_at: 0.8,
      compact_instruction: "$insomnia/compact",
      run_command: { timeout_ms: 300_000, network: false },
    });
    expect(manifest.scope.allow).toHaveLength(2);
    expect(manifest.scope.deny).toHaveLength(2);
    expect(manifest.provider?.kind).toBe("anthropic");
    expect(manifest.skills).toEqual({ budget: 6000 });
  });

  test("every_key_is_documented", () => {
    expect(knownKeysAt(["scope", "allow", 0])).toEqual(["target", "permission", "recursive"]);
    const missing: string[] = [];
    for (const section of knownKeysAt([]) ?? []) {
      for (const key of knownKeysAt([section]) ?? []) {
        if (!docs.includes(`\`${section}.${key}\``)) missing.push(`${section}.${key}`);
      }
    }
    for (const key of knownKeysAt(["scope", "allow", 0]) ?? []) if (!docs.includes(`| \`${key}\``)) missing.push(key);
    expect(missing).toEqual([]);
  });
});
