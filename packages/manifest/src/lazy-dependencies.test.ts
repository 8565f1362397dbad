import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";

// yaml and valibot are loaded on first use (lazy-dependencies.ts): a run without a
// manifest layer loads neither. Both are required through their CommonJS builds, so
// require.cache says whether they were loaded. That cache is per process: this relies on
// vitest's default of one fresh worker process per test file (pool "forks", isolate on).
const require = createRequire(import.meta.url);
const LAZY = { yaml: require.resolve("yaml"), valibot: require.resolve("valibot") };
const loaded = () => ({
  yaml: require.cache[LAZY.yaml] !== undefined,
  valibot: require.cache[LAZY.valibot] !== undefined,
});

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "insomnia-manifest-lazy-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("yaml and valibot are loaded lazily", () => {
  test("no_source_file_imports_yaml_or_valibot_eagerly", async () => {
    const dir = import.meta.dirname;
    const sources = (await readdir(dir)).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    const eager: string[] = [];
    for (const name of sources) {
      const text = await readFile(join(dir, name), "utf8");
      if (/^import(?!\s+type\b)[^;]*\bfrom\s+["'](yaml|valibot)["']/m.test(text)) eager.push(name);
    }
    expect(sources).toEqual(expect.arrayContaining(["schema.ts"]));
    expect(eager).toEqual([]);
  });

  test("a_manifest_without_layers_loads_neither_and_a_layer_loads_both", async () => {
    // This file imports nothing that loads them, and vitest runs each test file in a fresh module registry.
    const before = loaded();
    const { loadManifest } = await import("./index.ts");
    const cwd = join(root, "project");
    await mkdir(cwd, { recursive: true });
    const env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "xdg") };
    const bare = await loadManifest({ cwd, env });
    expect([bare.files, bare.manifest.worker.instruction]).toEqual([[], "$insomnia/default"]);
    expect([before, loaded()]).toEqual([
      { yaml: false, valibot: false },
      { yaml: false, valibot: false },
    ]);

    await mkdir(join(cwd, ".insomnia"));
    await writeFile(join(cwd, ".insomnia", "pod.yaml"), "pod:\n  name: lazy\nworker:\n  max_tokens: 1024\n");
    const withNumber = await loadManifest({ cwd, env });
    expect(withNumber.manifest.worker.max_tokens).toBe(1024);
    expect(loaded()).toEqual({ yaml: true, valibot: true });
  });

  test("resolving_an_empty_layer_applies_the_defaults_and_anything_else_is_still_checked", async () => {
    const { resolveManifest, ManifestError } = await import("./index.ts");
    const cwd = join(root, "p");
    expect(resolveManifest({}, { cwd }).scope.allow).toEqual([{ target: cwd, permission: "write", recursive: true }]);
    for (const bad of [[], Object.create({ pod: { name: "" } }) as object, { worker: [] }]) {
      let error: unknown;
      try {
        resolveManifest(bad as never, { cwd });
      } catch (caught) {
        error = caught;
      }
      expect(ManifestError.is(error), JSON.stringify(bad)).toBe(true);
    }
  });
});
