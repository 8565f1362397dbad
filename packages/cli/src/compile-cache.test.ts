import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { BundleLoader, CompileCache, compileCacheDir } from "./compile-cache.ts";

describe("compileCacheDir", () => {
  test("node_disable_compile_cache_turns_it_off", () => {
    expect(compileCacheDir({ HOME: "/h", NODE_DISABLE_COMPILE_CACHE: "1" })).toBeUndefined();
  });
  test("node_compile_cache_then_xdg_cache_home_then_home", () => {
    expect(compileCacheDir({ HOME: "/h", XDG_CACHE_HOME: "/x", NODE_COMPILE_CACHE: "/n" })).toBe("/n/insomnia-pod");
    expect(compileCacheDir({ HOME: "/h", XDG_CACHE_HOME: "/x" })).toBe("/x/insomnia/compile-cache");
    expect(compileCacheDir({ HOME: "/h", XDG_CACHE_HOME: "" })).toBe("/h/.cache/insomnia/compile-cache");
  });
  test("no_home_no_cache", () => {
    expect(compileCacheDir({})).toBeUndefined();
    expect(compileCacheDir({ HOME: "" })).toBeUndefined();
  });
});

describe("BundleLoader", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "compile-cache-")));
    await writeFile(
      join(dir, "main.cjs"),
      'const v = require("./vendor/v.cjs"); module.exports = { twice: v.n * 2, same: require("./vendor/v.cjs") === v, path: require("node:path").sep, file: __filename };\n',
    );
    await mkdir(join(dir, "vendor"));
    await writeFile(
      join(dir, "vendor", "v.cjs"),
      "globalThis.__vendorRuns = (globalThis.__vendorRuns ?? 0) + 1; exports.n = 21;\n",
    );
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  test("runs_a_file_with_its_vendor_files_loaded_once_and_node_builtins", () => {
    const before = (globalThis as { __vendorRuns?: number }).__vendorRuns ?? 0;
    const exports = new BundleLoader(dir, {}, undefined).load("main.cjs");
    expect(exports).toEqual({ twice: 42, same: true, path: "/", file: join(dir, "main.cjs") });
    expect((globalThis as { __vendorRuns?: number }).__vendorRuns).toBe(before + 1);
  });

  test("writes_entries_at_flush_and_reads_them_back", async () => {
    const cacheDir = join(dir, "cache");
    const files = {
      "main.cjs": { id: "0123456789abcdef", ascii: true, dynamicImport: false },
      "vendor/v.cjs": { id: "fedcba9876543210", ascii: false, dynamicImport: true },
    };
    const cache = new CompileCache(cacheDir);
    new BundleLoader(dir, files, cache).load("main.cjs");
    cache.flush();
    const names = (await readdir(cacheDir)).sort();
    expect(names).toEqual([
      `main_cjs-0123456789abcdef-${process.version}-${process.arch}.bin`,
      `v_cjs-fedcba9876543210-${process.version}-${process.arch}.bin`,
    ]);
    const bytes = await readFile(join(cacheDir, names[0]!));
    expect(bytes.subarray(0, 4).toString("latin1")).toBe("PDC1");
    // A second process (here: a second loader) finds them and writes nothing new.
    const again = new CompileCache(cacheDir);
    expect(new BundleLoader(dir, files, again).load("main.cjs")).toMatchObject({ twice: 42 });
    await rm(join(cacheDir, names[1]!));
    again.flush();
    expect((await readdir(cacheDir)).sort()).toEqual([names[0]]);
  });

  test("a_file_with_a_variant_has_an_entry_per_variant", async () => {
    const cacheDir = join(dir, "cache");
    const files = { "main.cjs": { id: "0123456789abcdef", ascii: true, dynamicImport: false } };
    for (const variant of ["prompt", "check", "prompt"]) {
      const cache = new CompileCache(cacheDir, { "main.cjs": variant });
      new BundleLoader(dir, files, cache).load("main.cjs");
      cache.flush();
    }
    expect((await readdir(cacheDir)).sort()).toEqual([
      `main_cjs-check-0123456789abcdef-${process.version}-${process.arch}.bin`,
      `main_cjs-prompt-0123456789abcdef-${process.version}-${process.arch}.bin`,
    ]);
  });

  test("a_file_without_an_id_is_compiled_without_the_cache", async () => {
    const cacheDir = join(dir, "cache");
    const cache = new CompileCache(cacheDir);
    expect(new BundleLoader(dir, {}, cache).load("main.cjs")).toMatchObject({ twice: 42 });
    cache.flush();
    await expect(readdir(cacheDir)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
