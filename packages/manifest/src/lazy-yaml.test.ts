import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";

const require = createRequire(import.meta.url);
const yamlEntry = require.resolve("yaml");
const isYamlLoaded = (): boolean => require.cache[yamlEntry] !== undefined;

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "insomnia-manifest-lazy-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("yaml is loaded lazily", () => {
  test("no_source_file_imports_yaml_eagerly", async () => {
    const dir = import.meta.dirname;
    const sources = (await readdir(dir)).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    const eager: string[] = [];
    for (const name of sources) {
      const text = await readFile(join(dir, name), "utf8");
      if (/^import(?!\s+type\b)[^;]*\bfrom\s+["']yaml["']/m.test(text)) eager.push(name);
    }
    expect(sources).toContain("safe-yaml.ts");
    expect(eager).toEqual([]);
  });

  test("a_manifest_without_files_never_loads_yaml_and_a_layer_file_does", async () => {
    // This file imports nothing that loads yaml, and vitest runs each test file in a fresh module registry.
    const loadedBefore = isYamlLoaded();
    const { loadManifest } = await import("./index.ts");
    const cwd = join(root, "project");
    await mkdir(cwd, { recursive: true });
    const env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "xdg") };
    const bare = await loadManifest({ cwd, env });
    expect(bare.files).toEqual([]);
    expect([loadedBefore, isYamlLoaded()]).toEqual([false, false]);

    await mkdir(join(cwd, ".insomnia"));
    await writeFile(join(cwd, ".insomnia", "pod.yaml"), "pod:\n  name: lazy\n");
    const withFile = await loadManifest({ cwd, env });
    expect(withFile.manifest.pod.name).toBe("lazy");
    expect(isYamlLoaded()).toBe(true);
  });
});
