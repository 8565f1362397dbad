import { execFile } from "node:child_process";
import { cp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { basename, dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN, runPod, useSandbox } from "./__fixtures__/sandbox.ts";

// The compile cache in the sandbox HOME: these tests look at it.
const { box, podProcess: pod } = useSandbox({ ownCompileCache: true });
const STACK_LINE = /^\s+at /m;

describe("help and version", () => {
  test("help_lists_every_command", async () => {
    const run = await pod("--help");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Usage: pod <command> \[flags\]\n/);
    for (const command of ["prompt", "check", "init", "run", "resume", "log", "trust"])
      expect(run.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
  });

  test("command_help_lists_every_flag_of_the_command", async () => {
    const flags = {
      prompt: ["--cwd", "--manifest", "--overlay", "--tool", "--now", "--explain", "--json", "--help"],
      check: ["--cwd", "--manifest", "--overlay", "--json", "--help"],
      init: ["--cwd", "--force", "--help"],
      run: ["--cwd", "--manifest", "--overlay", "--now", "--new", "--store", "--help"],
      resume: ["--cwd", "--manifest", "--overlay", "--now", "--store", "--help"],
      log: ["--cwd", "--manifest", "--overlay", "--store", "--json", "--help"],
      trust: ["--cwd", "--list", "--revoke", "--help"],
    };
    for (const [command, expected] of Object.entries(flags)) {
      const run = await pod(command, "--help");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        new RegExp(`^Usage: pod ${command} \\[flags\\]( \\[message\\.\\.\\.\\]| \\[id\\])?\n`),
      );
      for (const flag of expected) expect(run.stdout, `${command} ${flag}`).toContain(`${flag}`);
      expect((await pod("help", command)).stdout).toBe(run.stdout);
    }
  });

  test("version_is_the_package_version", async () => {
    const { version } = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const run = await pod("--version");
    expect([run.code, run.stdout, run.stderr]).toEqual([0, `${version}\n`, ""]);
  });
});

describe("wrong usage exits 2 without a stack", () => {
  const cases: [string, string[], RegExp][] = [
    ["no_command", [], /^pod: USAGE: missing command \(see 'pod --help'\)\n$/],
    ["unknown_command", ["frob"], /^pod: USAGE: unknown command 'frob'/],
    ["unknown_flag", ["prompt", "--bogus"], /^pod: USAGE: Unknown option '--bogus'.*\(see 'pod prompt --help'\)\n$/],
    ["unknown_global_flag", ["--bogus"], /^pod: USAGE: Unknown option '--bogus'/],
    ["missing_value", ["prompt", "--cwd"], /^pod: USAGE: Option '--cwd <value>' argument missing/],
    ["flag_as_value", ["prompt", "--manifest", "--explain"], /^pod: USAGE: Option '--manifest' argument is ambiguous/],
    [
      "bad_now",
      ["prompt", "--now", "2026-02-30T00:00:00Z"],
      /^pod: USAGE: --now '2026-02-30T00:00:00Z' is not an RFC 3339 date-time/,
    ],
    ["stray_argument", ["check", "here"], /^pod: USAGE: unexpected argument 'here'/],
    ["flag_of_another_command", ["init", "--tool", "x"], /^pod: USAGE: Unknown option '--tool'/],
    ["explain_with_json", ["prompt", "--explain", "--json"], /^pod: USAGE: --explain and --json cannot be combined/],
    [
      "missing_cwd",
      ["prompt", "--cwd", "does-not-exist"],
      /^pod: BAD_CWD: --cwd \/.*\/does-not-exist: no such directory\n$/,
    ],
  ];
  for (const [name, args, stderr] of cases) {
    test(name, async () => {
      const run = await pod(...args);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(stderr);
      expect(run.stderr).not.toMatch(STACK_LINE);
    });
  }
});

describe("init", () => {
  test("init_through_the_bin_writes_a_workspace_that_check_accepts", async () => {
    expect((await pod("init")).code).toBe(0);
    expect(await readFile(join(box.ws, ".insomnia", "pod.yaml"), "utf8")).toContain("worker:");
    expect((await pod("check")).code).toBe(0);
  });
});

describe("colour", () => {
  const broken = async () => box.write(".insomnia/pod.yaml", "worker:\n  instructions: x\n");

  test("errors_are_plain_on_a_pipe", async () => {
    await broken();
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("UNKNOWN_KEY");
    expect(run.stderr).not.toContain("\u001b[");
  });

  test("force_color_colours_the_code_red", async () => {
    await broken();
    const run = await runPod(["check"], { cwd: box.ws, env: { ...box.env, FORCE_COLOR: "1" } });
    expect(run.stderr).toContain("\u001b[31mUNKNOWN_KEY\u001b[39m");
  });

  test("no_color_wins_over_force_color", async () => {
    await broken();
    const run = await runPod(["check"], { cwd: box.ws, env: { ...box.env, FORCE_COLOR: "1", NO_COLOR: "1" } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("UNKNOWN_KEY");
    expect(run.stderr).not.toContain("\u001b[");
  });
});

/** What one bundle file `require`s with a literal argument. */
function requiredSpecifiers(code: string): string[] {
  return [...code.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!);
}

/** The names of the built bin's dist/vendor/<name>.cjs files. */
async function vendorNames(): Promise<string[]> {
  const files = await readdir(join(dirname(BIN), "vendor"));
  return files.filter((name) => name.endsWith(".cjs")).map((name) => name.replace(/\.cjs$/, ""));
}

/** A copy of the built bin's directory without the named dist/vendor files. */
async function binWithout(vendors: readonly string[]): Promise<string> {
  // Laid out as installed: dist/ beside package.json, where `--version` reads the version.
  const dir = join(box.home, "cli-copy", "dist");
  await cp(dirname(BIN), dir, { recursive: true });
  await cp(join(dirname(BIN), "..", "package.json"), join(dir, "..", "package.json"));
  for (const name of vendors) await rm(join(dir, "vendor", `${name}.cjs`));
  return join(dir, basename(BIN));
}

function runBin(bin: string, args: readonly string[], env: Record<string, string> = box.env, nodeArgs: string[] = []) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolvePromise) => {
    execFile(
      process.execPath,
      [...nodeArgs, bin, ...args],
      { cwd: box.ws, env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) =>
        resolvePromise({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}

const configured = async () => {
  await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
  await box.write(".insomnia/prompts/main.md", 'Work in {{cwd}}.\n{{> "$workspace/more"}}\n');
  await box.write(".insomnia/prompts/more.md", '{{#if tools}}Tools: {{join tools ", "}}.{{/if}}\n');
};

describe("start-up cost", () => {
  // The bin is CommonJS bundles (issue 15): these check what each command reads.
  test("bundle_requires_only_builtins_and_its_vendor_files", async () => {
    const dist = dirname(BIN);
    const vendors = new Set((await readdir(join(dist, "vendor"))).map((name) => `./vendor/${name}`));
    expect(vendors.size).toBeGreaterThan(0);
    for (const name of [basename(BIN), "pod.cjs"]) {
      const required = requiredSpecifiers(await readFile(join(dist, name), "utf8"));
      expect(required.length, name).toBeGreaterThan(0);
      const other = required.filter(
        (spec) => !vendors.has(spec) && !builtinModules.includes(spec.replace(/^node:/, "")),
      );
      expect(other, name).toEqual([]);
    }
  });

  test("bundled_imports_of_builtins_and_vendors_load_with_their_importer_and_yaml_and_valibot_on_first_use", async () => {
    // Each is a small module esbuild evaluates with the module importing it (see lazyRequireModule in tsup.config.ts).
    const text = await readFile(join(dirname(BIN), "pod.cjs"), "utf8");
    const shims = [...text.matchAll(/"insomnia-lazy-require:([^"]+)"\([^)]*\)\{([^}]*)/g)].map(
      ([, spec, body]) => [spec!, body!] as const,
    );
    expect(shims.map(([spec]) => spec)).toEqual(
      expect.arrayContaining(["node:fs", "node:module", "./vendor/anthropic.cjs"]),
    );
    // yaml and valibot, imported statically by manifest and safe-yaml: a proxy that requires the file on first use.
    const onFirstUse = new Set(["./vendor/yaml.cjs", "./vendor/valibot.cjs"]);
    expect(shims.filter(([spec]) => onFirstUse.has(spec)).length).toBe(onFirstUse.size);
    for (const [spec, body] of shims) {
      const required = `require(${JSON.stringify(spec)})`;
      if (onFirstUse.has(spec)) {
        expect(body, spec).toMatch(`loaded??=${required};`);
        expect(body, spec).toMatch(".exports={__proto__:new Proxy(");
        continue;
      }
      expect(body, spec).toMatch(`.exports=${required}`);
    }
  });

  test("ai_and_the_providers_share_one_zod_file_and_mcp_keeps_its_own", async () => {
    // One copy of zod for the AI SDK's files, as Node loads one from node_modules (see VENDORS in tsup.config.ts).
    const code = (name: string) => readFile(join(dirname(BIN), name), "utf8");
    const zod = ['$constructor("ZodError"', "class _ZodError extends Error"]; // zod 4's and zod 3's
    for (const name of ["ai", "anthropic", "openai", "openai-compatible"]) {
      const text = await code(`vendor/${name}.cjs`);
      expect([name, requiredSpecifiers(text)]).toEqual([name, expect.arrayContaining(["./vendor/zod.cjs"])]);
      expect([name, zod.filter((mark) => text.includes(mark))]).toEqual([name, []]);
    }
    const shared = await code("vendor/zod.cjs");
    expect(zod.filter((mark) => shared.includes(mark))).toEqual(zod);
    // `pod prompt` and `pod check` load mcp.cjs for a manifest's servers: it carries the part of zod it uses.
    for (const name of ["pod.cjs", "vendor/mcp.cjs"]) {
      expect(requiredSpecifiers(await code(name)), name).not.toContain("./vendor/zod.cjs");
    }
  });

  test("help_and_version_read_no_vendor_file", async () => {
    const bin = await binWithout(await vendorNames());
    expect((await runBin(bin, ["--help"])).code).toBe(0);
    expect((await runBin(bin, ["--version"])).code).toBe(0);
    const usage = await runBin(bin, ["frob"]);
    expect([usage.code, usage.stderr]).toEqual([2, "pod: USAGE: unknown command 'frob' (see 'pod --help')\n"]);
  });

  test("prompt_in_an_empty_workspace_reads_no_vendor_file", async () => {
    const bin = await binWithout(await vendorNames());
    const run = await runBin(bin, ["prompt", "--now", "2026-01-02T03:04:05Z"]);
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain("## Working boundaries");
  });

  test("prompt_and_check_never_read_the_ai_sdk_pg_undici_or_the_tokenizer", async () => {
    await configured();
    const bin = await binWithout([
      "ai",
      "anthropic",
      "openai",
      "openai-compatible",
      "zod",
      "pg",
      "o200k-base",
      "undici",
    ]);
    const prompt = await runBin(bin, ["prompt", "--now", "2026-01-02T03:04:05Z"]);
    expect([prompt.code, prompt.stderr]).toEqual([0, ""]);
    expect(prompt.stdout).toContain(`Work in ${box.ws}.`);
    const check = await runBin(bin, ["check"]);
    expect([check.code, check.stderr]).toEqual([0, ""]);
    expect(check.stdout).toContain("2 source files");
    // --explain counts tokens: the one prompt path that needs the tokenizer's file.
    const explain = await runBin(bin, ["prompt", "--explain"]);
    expect(explain.code).not.toBe(0);
    expect(explain.stderr).toContain("vendor/o200k-base.cjs: ENOENT");
  });
});

describe("compile cache", () => {
  const cacheDir = () => join(box.home, ".cache", "insomnia", "compile-cache");
  const entries = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).sort();

  test("first_run_writes_an_entry_per_file_read_and_later_runs_use_it", async () => {
    await configured();
    const first = await pod("prompt", "--now", "2026-01-02T03:04:05Z");
    expect(first.code).toBe(0);
    const written = await entries(cacheDir());
    expect(written.map((name) => name.replace(/-[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+\.bin$/, ""))).toEqual([
      "handlebars_parser_cjs",
      "pod_cjs-prompt",
      "valibot_cjs",
      "yaml_cjs",
    ]);
    const stats = await Promise.all(written.map((name) => stat(join(cacheDir(), name))));
    expect(stats.map((s) => s.mode & 0o777)).toEqual(written.map(() => 0o600));
    expect((await stat(cacheDir())).mode & 0o777).toBe(0o700);
    const second = await pod("prompt", "--now", "2026-01-02T03:04:05Z");
    expect(second).toEqual(first);
    // Accepted entries are not rewritten.
    const again = await Promise.all(written.map((name) => stat(join(cacheDir(), name))));
    expect(again.map((s) => s.mtimeMs)).toEqual(stats.map((s) => s.mtimeMs));
  });

  test("each_command_has_its_own_entry_of_the_bins_bundle", async () => {
    // What `pod --help` compiled is not what `pod prompt` needs: the first of each writes its own.
    expect((await pod("--help")).code).toBe(0);
    expect((await pod("prompt")).code).toBe(0);
    expect((await pod("check")).code).toBe(0);
    expect((await pod("prompt")).code).toBe(0);
    const names = (await entries(cacheDir())).map((name) => name.replace(/-[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+\.bin$/, ""));
    expect(names).toEqual(["pod_cjs-check", "pod_cjs-other", "pod_cjs-prompt"]);
  });

  test("a_damaged_entry_is_ignored_and_replaced", async () => {
    expect((await pod("prompt")).code).toBe(0);
    const [entry] = await entries(cacheDir());
    expect(entry).toMatch(/^pod_cjs-prompt-/);
    const file = join(cacheDir(), entry!);
    const good = await readFile(file);
    for (const damaged of [Buffer.from("not a cache"), Buffer.concat([good.subarray(0, 4), Buffer.alloc(2000, 7)])]) {
      await writeFile(file, damaged);
      const run = await pod("prompt", "--now", "2026-01-02T03:04:05Z");
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(run.stdout).toContain("## Working boundaries");
      const rewritten = await readFile(file);
      expect(rewritten.subarray(0, 4)).toEqual(good.subarray(0, 4));
      expect(rewritten.length).toBeGreaterThan(damaged.length);
    }
  });

  test("node_disable_compile_cache_writes_nothing", async () => {
    const run = await runPod(["prompt"], { cwd: box.ws, env: { ...box.env, NODE_DISABLE_COMPILE_CACHE: "1" } });
    expect(run.code).toBe(0);
    expect(await entries(join(box.home, ".cache"))).toEqual([]);
  });

  test("node_compile_cache_and_xdg_cache_home_move_it", async () => {
    const nodeDir = join(box.home, "node-cache");
    expect((await runPod(["prompt"], { cwd: box.ws, env: { ...box.env, NODE_COMPILE_CACHE: nodeDir } })).code).toBe(0);
    expect((await entries(join(nodeDir, "insomnia-pod"))).length).toBe(1);
    const xdgCache = join(box.home, "xdg-cache");
    expect((await runPod(["prompt"], { cwd: box.ws, env: { ...box.env, XDG_CACHE_HOME: xdgCache } })).code).toBe(0);
    expect((await entries(join(xdgCache, "insomnia", "compile-cache"))).length).toBe(1);
    expect(await entries(join(box.home, ".cache"))).toEqual([]);
  });

  test("an_unwritable_cache_directory_changes_nothing_but_speed", async () => {
    await box.write("file-not-dir", "x", box.home);
    const run = await runPod(["prompt", "--now", "2026-01-02T03:04:05Z"], {
      cwd: box.ws,
      env: { ...box.env, XDG_CACHE_HOME: join(box.home, "file-not-dir") },
    });
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain("## Working boundaries");
  });
});
