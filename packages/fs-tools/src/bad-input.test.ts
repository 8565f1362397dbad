import { execFileSync } from "node:child_process";
import { renameSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";
import type { ToolMessage } from "@insomnia/worker";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Box, makeBox, scopeWithHook, serverFor } from "./__fixtures__/tree.ts";
import { changes, snapshot } from "./__fixtures__/watch.ts";

// design.md, "Bad input, Part 2": "a file tool asked for a path outside the scope, through
// `..`, a symlink, a symlink swapped mid-call, a FIFO or device → an isError tool result;
// nothing read or written outside the scope". One test per way in; each watches the
// outside directory itself, not only the tool's answer.

const SECRET = "TOP-SECRET-CANARY";
let box: Box;
let repo: string;
let outside: string;
let before: Map<string, string>;

beforeEach(() => {
  box = makeBox();
  repo = box.dir("repo");
  outside = box.dir("outside");
  box.write("outside/secret.txt", `${SECRET}\n`);
  box.write("outside/dir/x.txt", `${SECRET} in a directory\n`);
  box.write("repo/inside.txt", "inside\n");
  box.dir("repo/sub");
  before = snapshot(outside);
});
afterEach(() => box.remove());

const scopeConfig = { allow: [{ target: ".", permission: "write" as const }] };

/** Every call of every tool at `path`: each must come back isError without a byte of the secret. */
async function everyToolRefuses(scope: Scope, path: string): Promise<ToolMessage[]> {
  const server = serverFor(scope);
  const inputs: [string, unknown][] = [
    ["read_file", { path }],
    ["list_dir", { path }],
    ["write_file", { path, content: "pwned" }],
    ["write_file", { path: `${path}/new.txt`, content: "pwned" }],
    ["edit_file", { path, old_string: SECRET, new_string: "pwned" }],
  ];
  const results: ToolMessage[] = [];
  for (const [name, input] of inputs) {
    const result = await server.call({ id: name, name, input });
    expect(result.isError, `${name} ${JSON.stringify(input)}: ${result.content}`).toBe(true);
    expect(result.content).not.toContain(SECRET);
    results.push(result);
  }
  expect(changes(before, snapshot(outside))).toEqual([]);
  return results;
}

describe("bad input, Part 2: a file tool asked for a path outside the scope", () => {
  test("outside_path_is_an_is_error_result_naming_the_path_and_rule", async () => {
    const scope = Scope.fromConfig(scopeConfig, repo);
    const [read] = await everyToolRefuses(scope, join(outside, "secret.txt"));
    expect(read!.content).toBe(
      `read_file refused ${outside}/secret.txt: it is outside the scope: no allow rule covers it (readable: ${repo}); nothing was accessed`,
    );
    await everyToolRefuses(scope, outside);
  });

  test("dot_dot_out_of_the_scope_is_an_is_error_result", async () => {
    const scope = Scope.fromConfig(scopeConfig, repo);
    const [read] = await everyToolRefuses(scope, "../outside/secret.txt");
    expect(read!.content).toContain(
      `read_file refused "../outside/secret.txt" (${outside}/secret.txt): it is outside the scope`,
    );
    await everyToolRefuses(scope, "sub/../../outside");
    await everyToolRefuses(scope, "sub/../../outside/dir");
  });

  test("symlink_out_of_the_scope_is_an_is_error_result", async () => {
    symlinkSync(join(outside, "secret.txt"), join(repo, "file-link"));
    symlinkSync("../outside", join(repo, "dir-link"));
    symlinkSync(join(outside, "not-yet.txt"), join(repo, "dangling"));
    const scope = Scope.fromConfig(scopeConfig, repo);
    const [read] = await everyToolRefuses(scope, "file-link");
    expect(read!.content).toContain(`read_file refused "file-link" (${outside}/secret.txt): it is outside the scope`);
    await everyToolRefuses(scope, "dir-link");
    await everyToolRefuses(scope, "dir-link/secret.txt");
    await everyToolRefuses(scope, "dir-link/dir");
    await everyToolRefuses(scope, "dangling");
    await everyToolRefuses(scope, "sub/../dir-link/secret.txt");
  });

  test("symlink_swapped_mid_call_is_an_is_error_result", async () => {
    // The name-based check resolves every link, so the attack that matters is a real
    // directory on the checked path replaced by a symlink right after a check passed.
    const scope = Scope.fromConfig(scopeConfig, repo);
    const swap = join(repo, "swap");
    const cases: [string, unknown, number][] = [
      ["read_file", { path: "swap/secret.txt" }, 1],
      ["list_dir", { path: "swap" }, 1],
      ["list_dir", { path: "swap" }, 2],
      ["write_file", { path: "swap/new.txt", content: "pwned" }, 1],
      ["write_file", { path: "swap/secret.txt", content: "pwned" }, 1],
      ["write_file", { path: "swap/deeper/new.txt", content: "pwned" }, 1],
      ["edit_file", { path: "swap/secret.txt", old_string: "decoy", new_string: "pwned" }, 1],
      // An inner directory: the open follows the swapped link, the descriptor's real path gives it away.
      ["read_file", { path: "swap/dir/x.txt" }, 1],
      ["list_dir", { path: "swap/dir" }, 1],
      ["write_file", { path: "swap/dir/x.txt", content: "pwned" }, 1],
      ["write_file", { path: "swap/dir/new/deeper.txt", content: "pwned" }, 1],
      ["edit_file", { path: "swap/dir/x.txt", old_string: "decoy", new_string: "pwned" }, 1],
    ];
    for (const [name, input, when] of cases) {
      box.write("repo/swap/secret.txt", "decoy\n");
      box.write("repo/swap/dir/x.txt", "decoy\n");
      const hooked = scopeWithHook(scope, when, () => {
        renameSync(swap, join(repo, "parked"));
        symlinkSync(outside, swap);
      });
      const result = await serverFor(hooked).call({ id: "1", name, input });
      expect(result.isError, `${name} ${JSON.stringify(input)} at check ${when}: ${result.content}`).toBe(true);
      expect(result.content).not.toContain(SECRET);
      const inner = JSON.stringify(input).includes("swap/dir");
      // The link itself is caught by O_NOFOLLOW; a directory reached through it by the descriptor's real path.
      expect(result.content, result.content).toMatch(
        inner ? /\(.*\/outside\/dir.*\): it is outside the scope/ : /symbolic link during the call/,
      );
      expect(changes(before, snapshot(outside))).toEqual([]);
      unlinkSync(swap);
      renameSync(join(repo, "parked"), swap);
    }
  });

  test("last_component_swapped_for_a_symlink_mid_call_is_an_is_error_result", async () => {
    const scope = Scope.fromConfig(scopeConfig, repo);
    for (const [name, input] of [
      ["read_file", { path: "victim.txt" }],
      ["edit_file", { path: "victim.txt", old_string: "v", new_string: "w" }],
    ] as const) {
      box.write("repo/victim.txt", "v\n");
      // After the check on the directory's real path, victim.txt becomes a link to the secret.
      const hooked = scopeWithHook(scope, 2, () => {
        symlinkSync(join(outside, "secret.txt"), join(repo, "victim.tmp"));
        renameSync(join(repo, "victim.tmp"), join(repo, "victim.txt"));
      });
      const result = await serverFor(hooked).call({ id: "1", name, input });
      expect(result.isError).toBe(true);
      expect(result.content).toContain("during the call");
      expect(result.content).not.toContain(SECRET);
      expect(changes(before, snapshot(outside))).toEqual([]);
      unlinkSync(join(repo, "victim.txt"));
    }
  });

  test("fifo_is_an_is_error_result_and_never_blocks", async () => {
    box.fifo("repo/pipe");
    const scope = Scope.fromConfig(scopeConfig, repo);
    const server = serverFor(scope);
    for (const [name, input] of [
      ["read_file", { path: "pipe" }],
      ["edit_file", { path: "pipe", old_string: "a", new_string: "b" }],
      ["write_file", { path: "pipe", content: "x" }],
    ] as const) {
      const result = await server.call({ id: "1", name, input });
      expect(result).toMatchObject({ isError: true });
      expect(result.content).toContain("it is a FIFO (named pipe)");
    }
    // A FIFO renamed over a regular file right after the check: still refused, still no wait for a writer.
    box.write("repo/plain.txt", "plain\n");
    box.fifo("repo/pipe2");
    const hooked = scopeWithHook(scope, 2, () => renameSync(join(repo, "pipe2"), join(repo, "plain.txt")));
    const swapped = await serverFor(hooked).call({ id: "2", name: "read_file", input: { path: "plain.txt" } });
    expect(swapped).toMatchObject({ isError: true });
    expect(swapped.content).toContain("FIFO");
    // And a FIFO outside, reached through a link, is refused by the scope before anything opens it.
    execFileSync("mkfifo", [join(outside, "pipe")]);
    symlinkSync(join(outside, "pipe"), join(repo, "pipe-out"));
    before = snapshot(outside);
    await everyToolRefuses(scope, "pipe-out");
  });

  test("device_is_an_is_error_result_and_never_streams", async () => {
    symlinkSync("/dev/zero", join(repo, "zero"));
    symlinkSync("/dev/null", join(repo, "null"));
    const scope = Scope.fromConfig(scopeConfig, repo);
    await everyToolRefuses(scope, "zero");
    await everyToolRefuses(scope, "null");
    await everyToolRefuses(scope, "/dev/urandom");
    // Even a scope that grants reading /dev refuses its devices: read_file reads regular files only.
    const devScope = Scope.fromConfig({ allow: [{ target: "/dev", permission: "read" }] }, repo);
    const server = serverFor(devScope);
    for (const path of ["/dev/zero", "/dev/urandom", "/dev/null", "/dev/tty"]) {
      const result = await server.call({ id: "1", name: "read_file", input: { path } });
      expect(result.isError, path).toBe(true);
      expect(result.content).toMatch(/character device|does not exist|denies access/);
    }
  });
});
