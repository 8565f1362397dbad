import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "./index.ts";
import { guarded } from "../../../test/support/output-guard.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// 5,000 generated `pod` invocations, run in-process through main(argv, io): unknown
// commands and flags, missing values, garbage --now, --cwd / --manifest at files, FIFOs,
// directories, missing and binary paths, garbage overlays, odd tool names, NUL bytes, very
// long and repeated flags, against real temp workspaces holding hostile files (garbage
// pod.yaml, `{{x}}}}` prompts, deep nesting, include cycles, symlinks out of the workspace,
// a binary or FIFO AGENTS.md). Every invocation must exit 0, 1 or 2 — never 70 — with a
// `CODE` and no stack trace on 1/2; nothing may reach the real stdout/stderr or reject
// unhandled; a `pod prompt` that succeeds prints the trailing section.

const SEED = 0x90d_c11;
const RUNS = propertyRuns(300, 5_000);

// ---- workspaces -------------------------------------------------------------------------

let root = "";
/** Paths by name; built in beforeAll and never changed by a case (init has its own dir). */
const P: Record<string, string> = {};
const WORKSPACES = [
  "empty",
  "good",
  "garbageYaml",
  "aliasBomb",
  "unknownKeys",
  "badBraces",
  "deepNesting",
  "includeCycle",
  "symlinkPrompt",
  "symlinkAgents",
  "binaryAgents",
  "fifoAgents",
  "fifoPrompt",
  "fifoManifest",
  "dirManifest",
  "missingPrompt",
  "pwdElsewhere",
  "binaryManifest",
] as const;
type WorkspaceName = (typeof WORKSPACES)[number];

function write(path: string, content: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

function mkfifo(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync("mkfifo", [path]);
}

const BINARY = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
const manifest = (instruction: string): string => `worker:\n  instruction: "${instruction}"\n`;

function buildWorkspaces(): void {
  root = realpathSync(mkdtempSync(join(tmpdir(), "pod-cli-hostile-")));
  const ws = (name: WorkspaceName): string => {
    const dir = join(root, "ws", name);
    mkdirSync(dir, { recursive: true });
    P[name] = dir;
    return dir;
  };
  P.home = join(root, "home");
  P.xdg = join(root, "xdg");
  P.xdgGarbage = join(root, "xdg-garbage");
  mkdirSync(P.home, { recursive: true });
  write(join(P.xdg, "insomnia/prompts/u.md"), "User prompt for {{cwd}} with {{join tools}}\n");
  write(join(P.xdgGarbage, "insomnia/pod.yaml"), "worker: [\n\t- {{\u0000");
  P.outside = join(root, "outside.md");
  write(P.outside, "outside the workspace\n");

  ws("empty");
  const good = ws("good");
  write(join(good, ".insomnia/pod.yaml"), manifest("$workspace/main"));
  write(
    join(good, ".insomnia/prompts/main.md"),
    "Main for {{cwd}} on {{date}}.\n{{> part}}\n{{#each tools}}- {{this}}\n{{/each}}",
  );
  write(join(good, ".insomnia/prompts/part.md"), 'Part with tools: {{join tools ", "}}\n');
  write(join(good, "AGENTS.md"), "Be nice. {{not a template}}\n");

  write(
    join(ws("garbageYaml"), ".insomnia/pod.yaml"),
    "worker:\n\tinstruction: [unclosed\n  - : :\n%YAML 9\n\u0000\ufeff",
  );
  const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i <= 9; i++)
    bomb.push(
      `a${i}: &a${i} [*${i === 1 ? "a" : `a${i - 1}`}, *${i === 1 ? "a" : `a${i - 1}`}, *${i === 1 ? "a" : `a${i - 1}`}]`,
    );
  write(join(ws("aliasBomb"), ".insomnia/pod.yaml"), `${bomb.join("\n")}\n`);
  write(
    join(ws("unknownKeys"), ".insomnia/pod.yaml"),
    "worker:\n  instructions: x\n  max_turns: -1\n__proto__:\n  polluted: true\nscope:\n  allow: 7\n",
  );
  const braces = ws("badBraces");
  write(join(braces, ".insomnia/pod.yaml"), manifest("$workspace/main"));
  write(join(braces, ".insomnia/prompts/main.md"), "Hello {{x}}}} and {{{cwd}} {{#if}}\n");
  const deep = ws("deepNesting");
  write(join(deep, ".insomnia/pod.yaml"), manifest("$workspace/main"));
  write(join(deep, ".insomnia/prompts/main.md"), `${"{{#if tools}}".repeat(3000)}x${"{{/if}}".repeat(3000)}`);
  const cycle = ws("includeCycle");
  write(join(cycle, ".insomnia/pod.yaml"), manifest("$workspace/main"));
  write(join(cycle, ".insomnia/prompts/main.md"), "a {{> other}}\n");
  write(join(cycle, ".insomnia/prompts/other.md"), "b {{> main}}\n");
  const symPrompt = ws("symlinkPrompt");
  write(join(symPrompt, ".insomnia/pod.yaml"), manifest("$workspace/main"));
  mkdirSync(join(symPrompt, ".insomnia/prompts"), { recursive: true });
  symlinkSync(P.outside, join(symPrompt, ".insomnia/prompts/main.md"));
  symlinkSync("/etc", join(symPrompt, ".insomnia/prompts/etc"));
  const symAgents = ws("symlinkAgents");
  symlinkSync("/etc/passwd", join(symAgents, "AGENTS.md"));
  write(join(ws("binaryAgents"), "AGENTS.md"), BINARY);
  mkfifo(join(ws("fifoAgents"), "AGENTS.md"));
  const fifoPrompt = ws("fifoPrompt");
  write(join(fifoPrompt, ".insomnia/pod.yaml"), manifest("$workspace/main"));
  mkfifo(join(fifoPrompt, ".insomnia/prompts/main.md"));
  mkfifo(join(ws("fifoManifest"), ".insomnia/pod.yaml"));
  mkdirSync(join(ws("dirManifest"), ".insomnia/pod.yaml"), { recursive: true });
  write(join(ws("missingPrompt"), ".insomnia/pod.yaml"), manifest("$workspace/nope/../../x"));
  write(
    join(ws("pwdElsewhere"), ".insomnia/pod.yaml"),
    "pod:\n  pwd: /nonexistent/elsewhere\nscope:\n  allow:\n    - { target: /, permission: write }\n",
  );
  write(join(ws("binaryManifest"), ".insomnia/pod.yaml"), BINARY);

  // Paths the flags point at.
  P.file = join(root, "a-file.txt");
  write(P.file, "not a directory\n");
  P.fifo = join(root, "a-fifo");
  mkfifo(P.fifo);
  P.missing = join(root, "missing", "dir");
  P.binary = join(root, "binary.yaml");
  write(P.binary, BINARY);
  P.huge = join(root, "huge.yaml");
  write(P.huge, `# ${"x".repeat(300_000)}\nworker: {}\n`);
  P.goodManifest = join(root, "good.yaml");
  write(P.goodManifest, 'worker:\n  instruction: "$user/u"\n  max_turns: 3\n');
  P.garbageManifest = join(root, "garbage.yaml");
  write(P.garbageManifest, "{{x}}}}: [\n");
  P.dirLink = join(root, "dir-link");
  symlinkSync(P.good!, P.dirLink);
  P.loop = join(root, "loop");
  symlinkSync(P.loop, P.loop);
  P.initDir = join(root, "init");
}

/** Values a path flag takes: named paths, then raw hostile strings. */
const PATH_VALUES = [
  ...WORKSPACES.map((name) => ({ named: name })),
  ...["file", "fifo", "missing", "binary", "huge", "goodManifest", "garbageManifest", "dirLink", "loop"].map(
    (named) => ({ named }),
  ),
  ...[
    "",
    ".",
    "..",
    "a\u0000b",
    "x".repeat(5000),
    "/dev/null",
    "/",
    "-",
    "--",
    "a-file.txt/sub",
    "~",
    "$HOME",
    "con:",
    "\n",
  ].map((raw) => ({ raw })),
] as const;
type PathValue = (typeof PATH_VALUES)[number];

const INIT_CWD_VALUES: readonly PathValue[] = [
  { named: "initDir" },
  { named: "file" },
  { named: "fifo" },
  { named: "missing" },
  { raw: "a\u0000b" },
  { raw: "x".repeat(5000) },
];

function resolvePath(value: PathValue): string {
  return "named" in value ? P[value.named]! : value.raw;
}

const NOW_VALUES = [
  "2026-01-02T03:04:05Z",
  "2026-01-02T03:04:05.123456789+09:00",
  "2016-12-31T23:59:60Z",
  "yesterday",
  "",
  "2026-13-45T99:99:99Z",
  "2026-01-02T03:04:05+25:00",
  "2026-02-30T00:00:00Z",
  "9999999-01-01T00:00:00Z",
  "2026-01-02T03:04:05Z\u0000",
  "2026-01-02 03:04:05Z",
  "1e309",
  "x".repeat(10_000),
];
const OVERLAY_VALUES = [
  "worker.max_turns = 10",
  'worker.instruction = "$user/u"',
  'worker.instruction = "$insomnia/default"',
  'worker.instruction = "$workspace/../../etc/passwd"',
  'worker.instruction = "$workspace/main"',
  "scope.allow = [{target: /tmp, permission: read}]",
  "scope.deny = [{target: ., permission: write}]",
  "=",
  "worker",
  "worker.instruction = ",
  "worker.instruction",
  "a.b.c = {",
  "__proto__.polluted = 1",
  "constructor.prototype.x = 1",
  "worker..instruction = x",
  "worker.max_turns = 1e400",
  "worker.temperature = .nan",
  "provider = {kind: openai}",
  "pod.pwd = relative/dir",
  "pod.name = \u0000",
  `worker.instruction = "${"x".repeat(300_000)}"`,
  "x: &a [*a]",
  "worker = &a {max_turns: *a}",
];
const TOOL_VALUES = [
  "read_file",
  "write_file",
  "",
  " x",
  "x ",
  "a\u0000b",
  "{{x}}}}",
  "__proto__",
  "constructor",
  "ツール",
  "x".repeat(2000),
  "-",
  "\t",
];
const COMMANDS = [
  "prompt",
  "check",
  "init",
  "help",
  "--help",
  "-h",
  "--version",
  "-V",
  "bogus",
  "",
  "PROMPT",
  "prompt\u0000",
  "-x",
  "--",
];
const HELP_TOPICS = ["prompt", "check", "init", "bogus", ""];

/** The flags each command accepts (the generator keeps to these when hostileArgv is off). */
const COMMAND_FLAGS: Readonly<Record<string, readonly string[]>> = {
  prompt: ["--cwd", "--manifest", "--overlay", "--tool", "--now", "--explain", "--json"],
  check: ["--cwd", "--manifest", "--overlay", "--json"],
  init: ["--cwd", "--force"],
};

type FlagSpec =
  | { readonly flag: "--cwd" | "--manifest"; readonly value: number; readonly inline: boolean }
  | { readonly flag: "--overlay"; readonly value: number }
  | { readonly flag: "--tool"; readonly value: number }
  | { readonly flag: "--now"; readonly value: number }
  | { readonly flag: "bare"; readonly value: string }
  | { readonly flag: "missing-value"; readonly value: string };

const flagArb: fc.Arbitrary<FlagSpec> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      flag: fc.constantFrom("--cwd" as const, "--manifest" as const),
      value: fc.nat(),
      inline: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ flag: fc.constant("--overlay" as const), value: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ flag: fc.constant("--tool" as const), value: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ flag: fc.constant("--now" as const), value: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      flag: fc.constant("bare" as const),
      value: fc.constantFrom(
        "--explain",
        "--json",
        "--force",
        "--help",
        "-h",
        "--bogus",
        "-x",
        "--",
        "stray",
        "--json=1",
        "--no-json",
        "--cwd=",
        "-V",
        "\u0000",
        "--__proto__",
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      flag: fc.constant("missing-value" as const),
      value: fc.constantFrom("--cwd", "--manifest", "--overlay", "--tool", "--now"),
    }),
  },
);

interface Invocation {
  /** Off: only the command's own flags with well-formed values, so most cases reach the workspace. */
  readonly hostileArgv: boolean;
  readonly command: number;
  readonly topic: number;
  readonly flags: readonly FlagSpec[];
  readonly workspace: number;
  readonly env: "clean" | "garbageUserLayer" | "color";
}

const invocationArb: fc.Arbitrary<Invocation> = fc.record({
  hostileArgv: fc.boolean(),
  command: fc.oneof(
    { weight: 10, arbitrary: fc.constant(0) },
    { weight: 6, arbitrary: fc.constant(1) },
    { weight: 2, arbitrary: fc.constant(2) },
    { weight: 4, arbitrary: fc.nat({ max: COMMANDS.length - 1 }) },
  ),
  topic: fc.nat({ max: HELP_TOPICS.length - 1 }),
  flags: fc.array(flagArb, { maxLength: 6 }),
  workspace: fc.nat({ max: WORKSPACES.length - 1 }),
  env: fc.constantFrom("clean", "clean", "clean", "garbageUserLayer", "color"),
});

/** The argv and io.cwd of an invocation; `missing-value` flags go last so they lack their value. */
function argvOf(inv: Invocation): { argv: string[]; cwd: string; command: string } {
  const command = COMMANDS[inv.command]!;
  const isInit = command === "init";
  const argv = [command];
  if (command === "help") argv.push(HELP_TOPICS[inv.topic]!);
  const trailing: string[] = [];
  const own = COMMAND_FLAGS[command] ?? [];
  for (const f of inv.flags) {
    if (!inv.hostileArgv && (f.flag === "missing-value" || !own.includes(f.flag === "bare" ? f.value : f.flag)))
      continue;
    switch (f.flag) {
      case "--cwd":
      case "--manifest": {
        const pool =
          isInit && f.flag === "--cwd"
            ? INIT_CWD_VALUES
            : !inv.hostileArgv && f.flag === "--cwd"
              ? PATH_VALUES.slice(0, WORKSPACES.length)
              : PATH_VALUES;
        const value = resolvePath(pool[f.value % pool.length]!);
        if (f.inline) argv.push(`${f.flag}=${value}`);
        else argv.push(f.flag, value);
        break;
      }
      case "--overlay":
        argv.push("--overlay", OVERLAY_VALUES[f.value % OVERLAY_VALUES.length]!);
        break;
      case "--tool":
        argv.push("--tool", TOOL_VALUES[f.value % (inv.hostileArgv ? TOOL_VALUES.length : 2)]!);
        break;
      case "--now":
        argv.push("--now", NOW_VALUES[f.value % (inv.hostileArgv ? NOW_VALUES.length : 3)]!);
        break;
      case "bare":
        argv.push(f.value);
        break;
      case "missing-value":
        trailing.push(f.value);
        break;
    }
  }
  // pod init writes files, so it runs in its own directory, recreated before each case.
  return {
    argv: [...argv, ...trailing.slice(0, 1)],
    cwd: isInit ? P.initDir! : P[WORKSPACES[inv.workspace]!]!,
    command,
  };
}

// ---- io -----------------------------------------------------------------------------------

/** A Writable that keeps what was written; `isTTY` set only for the colour cases. */
class Capture extends Writable {
  text = "";
  declare readonly isTTY?: boolean;
  constructor(tty: boolean) {
    super({ decodeStrings: false });
    if (tty) Object.defineProperty(this, "isTTY", { value: true });
  }
  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += String(chunk);
    callback();
  }
}

// ---- counts and checks --------------------------------------------------------------------

const counts = {
  invocations: 0,
  byExit: new Map<number, number>(),
  byCode: new Map<string, number>(),
  byCommand: new Map<string, number>(),
  prompts: 0,
  explained: 0,
  ms: 0,
};

function bump(
  map: Map<string | number, number> | Map<string, number> | Map<number, number>,
  key: string | number,
): void {
  (map as Map<string | number, number>).set(key, ((map as Map<string | number, number>).get(key) ?? 0) + 1);
}

/** Fails the case with `what` unless `ok`. */
function check(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

const ANSI = /\u001b\[[0-9;]*m/g;
/** `pod: CODE:`, `pod: file:line:col: CODE:`, `file:line:col: CODE:` (check), `warning: CODE:`. */
const PROBLEM_LINE = /^(?:pod: )?(?:.*?: )?(?:warning: )?([A-Z][A-Z0-9_]*): /m;
const TRAILER = "\n---\n## Working boundaries\n";

function checkOutcome(argv: readonly string[], command: string, exit: number, stdout: string, stderr: string): void {
  const show = (): string =>
    `argv ${JSON.stringify(argv).slice(0, 600)} exit ${exit}\nstdout: ${stdout.slice(0, 600)}\nstderr: ${stderr.slice(0, 1200)}`;
  check(exit === 0 || exit === 1 || exit === 2, () => `exit ${exit} is not 0, 1 or 2: ${show()}`);
  check(!stdout.includes("\n    at ") && !stderr.includes("\n    at "), () => `a stack trace was printed: ${show()}`);
  const err = stderr.replace(ANSI, "");
  const isJson = argv.includes("--json") && !argv.some((a) => a === "--help" || a === "-h");
  if (exit !== 0) {
    const match = PROBLEM_LINE.exec(err);
    if (match !== null) {
      bump(counts.byCode, match[1]!);
    } else {
      // pod check --json reports its problems on stdout only.
      let codes: string[] = [];
      try {
        const parsed = JSON.parse(stdout) as { ok?: unknown; problems?: { code?: unknown }[] };
        if (parsed.ok === false && Array.isArray(parsed.problems)) codes = parsed.problems.map((p) => String(p.code));
      } catch {
        codes = [];
      }
      check(
        command === "check" && isJson && codes.length > 0 && codes.every((c) => /^[A-Z][A-Z0-9_]*$/.test(c)),
        () => `no CODE in the output: ${show()}`,
      );
      for (const code of codes) bump(counts.byCode, code);
    }
    check(exit !== 2 || /\b(USAGE|BAD_CWD)\b/.test(err), () => `exit 2 without USAGE/BAD_CWD: ${show()}`);
    if (COMMANDS.indexOf(command) >= COMMANDS.indexOf("bogus"))
      check(exit === 2, () => `an unknown command did not exit 2: ${show()}`);
    return;
  }
  if (command === "prompt" && !argv.some((a) => ["--help", "-h", "--explain", "--json"].includes(a))) {
    counts.prompts += 1;
    check(stdout.includes(TRAILER), () => `pod prompt printed no trailing section: ${show()}`);
    const tail = stdout.slice(stdout.lastIndexOf(TRAILER));
    check(
      !tail.slice(TRAILER.length).includes("\n---\n## ") ||
        tail.includes("\n---\n## Project instructions (AGENTS.md)\n"),
      () => `unexpected section after the boundaries: ${show()}`,
    );
  } else if (command === "check" && !isJson && !argv.some((a) => a === "--help" || a === "-h")) {
    check(/^ok: /m.test(stdout), () => `pod check exited 0 without "ok:": ${show()}`);
  } else if (command === "prompt" && isJson) {
    counts.explained += 1;
    const parsed = JSON.parse(stdout) as { prompt?: unknown };
    check(
      typeof parsed.prompt === "string" && parsed.prompt.includes(TRAILER),
      () => `--json without the prompt: ${show()}`,
    );
  }
}

beforeAll(() => {
  buildWorkspaces();
});

afterAll(() => {
  if (root !== "") rmSync(root, { recursive: true, force: true });
  const list = (map: Map<string | number, number>): string =>
    [...map.entries()]
      .sort(([a], [b]) => (String(a) < String(b) ? -1 : 1))
      .map(([k, n]) => `${JSON.stringify(k)} ${n}`)
      .join(", ");
  console.log(
    `[hostile-input] @insomnia/cli (seed ${SEED}): ${counts.invocations} in-process invocations in ${(counts.ms / 1000).toFixed(1)} s; ` +
      `exit ${list(counts.byExit as Map<string | number, number>)}; by command ${list(counts.byCommand as Map<string | number, number>)}; ` +
      `${counts.prompts} prompts with the trailing section, ${counts.explained} --json prompts; codes ${list(counts.byCode as Map<string | number, number>)}`,
  );
});

async function runInvocation(inv: Invocation): Promise<void> {
  const { argv, cwd, command } = argvOf(inv);
  if (command === "init") {
    rmSync(P.initDir!, { recursive: true, force: true });
    mkdirSync(P.initDir!);
  }
  const stdout = new Capture(false);
  const stderr = new Capture(inv.env === "color");
  const env: Record<string, string> = {
    HOME: P.home!,
    XDG_CONFIG_HOME: inv.env === "garbageUserLayer" ? P.xdgGarbage! : P.xdg!,
  };
  if (inv.env === "color") env.FORCE_COLOR = "1";
  const started = performance.now();
  const exit = await main(argv, { stdout, stderr, env, cwd });
  counts.ms += performance.now() - started;
  counts.invocations += 1;
  bump(counts.byExit, exit);
  bump(counts.byCommand, JSON.stringify(command).slice(1, -1));
  checkOutcome(argv, command, exit, stdout.text, stderr.text);
}

describe("pod under hostile argv and hostile workspaces", () => {
  it("generated_invocations_exit_0_1_or_2_with_a_code_and_never_print_to_the_real_streams", async () => {
    const { printed, rejections } = await guarded(async () => {
      await fc.assert(fc.asyncProperty(invocationArb, runInvocation), {
        seed: SEED,
        numRuns: RUNS,
        examples: WORKSPACES.flatMap((_, workspace): [Invocation][] => [
          [{ hostileArgv: false, command: 0, topic: 0, flags: [], workspace, env: "clean" }],
          [{ hostileArgv: false, command: 1, topic: 0, flags: [], workspace, env: "clean" }],
          [
            {
              hostileArgv: false,
              command: 0,
              topic: 0,
              flags: [{ flag: "bare", value: "--json" }],
              workspace,
              env: "clean",
            },
          ],
        ]),
      });
    });
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(counts.invocations).toBe(RUNS);
    expect(counts.byExit.get(70)).toBeUndefined();
    // Not vacuous: all three exits, and real prompts.
    for (const exit of [0, 1, 2]) expect([exit, counts.byExit.get(exit) ?? 0]).not.toEqual([exit, 0]);
    expect(counts.prompts).toBeGreaterThan(RUNS / 250);
  });
});
