import { readFile, readdir } from "node:fs/promises";
import { builtinModules } from "node:module";
import { basename, dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN, runPod, useSandbox } from "./__fixtures__/sandbox.ts";

const { box, pod } = useSandbox();
const STACK_LINE = /^\s+at /m;

describe("help and version", () => {
  test("help_lists_every_command", async () => {
    const run = await pod("--help");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/^Usage: pod <command> \[flags\]\n/);
    for (const command of ["prompt", "check", "init", "run", "resume", "log"])
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
    };
    for (const [command, expected] of Object.entries(flags)) {
      const run = await pod(command, "--help");
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: pod ${command} \\[flags\\]( \\[message\\.\\.\\.\\])?\n`));
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

/** Bare specifiers and local chunks imported statically (not via import()) by one built file. */
function staticImports(code: string): { local: string[]; bare: string[] } {
  const specifiers = [
    ...code.matchAll(/(?:^|[;\n}])\s*(?:import|export)\s*(?:[\w*{}\s,$]*?\s*from\s*)?["']([^"']+)["']/g),
  ].map((m) => m[1]!);
  return {
    local: specifiers.filter((s) => s.startsWith(".")),
    // tsup drops the node: prefix, so builtins are recognised by name.
    bare: specifiers.filter(
      (s) => !s.startsWith(".") && !s.startsWith("node:") && !builtinModules.includes(s.split("/")[0]!),
    ),
  };
}

async function staticClosure(entry: string): Promise<{ files: string[]; bare: string[] }> {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const found = staticImports(await readFile(file, "utf8"));
    for (const spec of found.bare) bare.add(spec);
    for (const spec of found.local) queue.push(join(dirname(file), spec));
  }
  return { files: [...seen], bare: [...bare] };
}

describe("start-up cost", () => {
  test("bin_loads_no_dependency_until_a_command_needs_it", async () => {
    const closure = await staticClosure(BIN);
    // --help and --version run on this closure alone: no yaml, valibot, handlebars or tokenizer.
    expect(closure.bare).toEqual([]);
  });

  // The bin is one bundle (issue 15): no chunk imports a package, so these check chunks, not packages.
  test("bundle_imports_no_package_at_run_time", async () => {
    const dist = dirname(BIN);
    const files = (await readdir(dist)).filter((name) => name.endsWith(".js"));
    const texts = await Promise.all(files.map((name) => readFile(join(dist, name), "utf8")));
    expect(texts.flatMap((text) => staticImports(text).bare)).toEqual([]);
    const dynamic = texts.flatMap((text) => [...text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!));
    expect(dynamic.length).toBeGreaterThan(0);
    expect(dynamic.filter((spec) => !spec.startsWith("./"))).toEqual([]);
  });

  test("prompt_loads_the_tokenizer_only_for_explain_and_json", async () => {
    const dist = dirname(BIN);
    const names = await readdir(dist);
    const chunk = names.find((name) => /^prompt-[\w-]+\.js$/.test(name));
    const tokenizer = names.find((name) => /^o200k_base-[\w-]+\.js$/.test(name));
    expect(chunk).toBeDefined();
    expect(tokenizer).toBeDefined();
    const closure = await staticClosure(join(dist, chunk!));
    expect(closure.files.map((file) => basename(file))).not.toContain(tokenizer);
    const files = names.filter((name) => name.endsWith(".js"));
    const texts = await Promise.all(files.map((name) => readFile(join(dist, name), "utf8")));
    const importsTokenizer = new RegExp(`import\\(\\s*["']\\./${tokenizer!.replace(".", "\\.")}["']\\s*\\)`);
    expect(texts.filter((text) => importsTokenizer.test(text)).length).toBe(1);
  });

  test("prompt_and_check_never_load_the_ai_sdk", async () => {
    const dist = dirname(BIN);
    const names = (await readdir(dist)).filter((name) => name.endsWith(".js"));
    const texts = new Map(
      await Promise.all(names.map(async (name) => [name, await readFile(join(dist, name), "utf8")] as const)),
    );
    // The Anthropic provider's chunk: the only code that sends this header.
    const provider = [...texts].filter(([, text]) => text.includes("anthropic-version")).map(([name]) => name);
    expect(provider.length).toBeGreaterThan(0);
    for (const command of ["prompt", "check"]) {
      const chunk = names.find((name) => new RegExp(`^${command}-[\\w-]+\\.js$`).test(name));
      expect(chunk, command).toBeDefined();
      const closure = (await staticClosure(join(dist, chunk!))).files.map((file) => basename(file));
      for (const name of provider) expect(closure, `${command} -> ${name}`).not.toContain(name);
    }
  });
});
