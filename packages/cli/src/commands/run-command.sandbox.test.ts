import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider, FakeReply, RecordedRequest } from "@insomnia/ai-sdk/testing";
import { afterEach, describe, expect, test } from "vitest";
import { processesWith } from "../../../sandbox/src/__fixtures__/escape-tree.ts";
import { BIN, runPod, useSandbox } from "../__fixtures__/sandbox.ts";

// The escape suite through `pod run`: the fake provider asks for run_command calls, the real
// bin runs them in bubblewrap (a process, so the key it was given is in its own environment),
// and everything is checked from outside the sandbox.
const { box } = useSandbox();
let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Json = Record<string, unknown>;
const API_KEY = `sk-ant-${randomUUID()}`;

/** The text of the tool result the model got in request `index` (the answer to the previous call). */
function toolResult(request: RecordedRequest | undefined): { text: string; isError: boolean } {
  const messages = (request!.json as Json).messages as { content: Json[] }[];
  const result = messages.at(-1)!.content[0]!;
  const content = result.content;
  const text = typeof content === "string" ? content : JSON.stringify(content);
  return { text, isError: result.is_error === true };
}

describe("run_command through pod run", () => {
  test("escape_attempts_from_the_model_fail_and_nothing_outside_changes", async () => {
    const key = await box.write(".ssh/id_rsa", `FAKE-KEY-${randomUUID()}\n`, box.home);
    const outside = join(dirname(box.ws), "outside.txt");
    execFileSync("git", ["init", "-q", "-b", "main", box.ws]);
    await box.write("notes.txt", "one\n");
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "-C", box.ws, "add", "-A"]);
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "-C", box.ws, "commit", "-qm", "c"]);
    await box.write("notes.txt", "one\ntwo\n");
    const marker = `stubborn-${randomUUID()}`;
    const call = (id: string, input: Json): FakeReply => ({ toolCalls: [{ id, name: "run_command", input }] });
    let providerPort = "";
    const replies: FakeReply[] = [
      call("t1", { command: `cat ${key}; cat ~/.ssh/id_rsa; cat /etc/shadow; ls ${box.home}` }),
      call("t2", {
        command: `echo escaped > ${outside}; echo 'exit 0' > .git/hooks/pre-commit; echo x >> .git/config`,
      }),
      call("t3", { command: "env; cat /proc/1/environ /proc/self/environ" }),
      // The provider itself listens on 127.0.0.1 outside the sandbox.
      call("t4", { command: "curl -sS --max-time 5 http://127.0.0.1:PORT/v1/messages -d '{}'" }),
      call("t5", {
        command: `trap '' TERM; (trap '' TERM; exec -a ${marker} sleep 600) & sleep 600`,
        timeout_ms: 1000,
      }),
      call("t6", { command: "git status --short && git diff" }),
      call("t7", { command: "ls", sandbox: false }),
      { text: "done" },
    ];
    const server = await startFakeProvider((_request, index) => {
      const reply = replies[index] ?? { text: "(no more replies)" };
      return JSON.parse(JSON.stringify(reply).replace("PORT", providerPort)) as FakeReply;
    });
    fake = server;
    providerPort = new URL(server.baseURL).port;
    await box.write(
      ".insomnia/pod.yaml",
      [
        "worker:",
        "  tools: [read_file, run_command]",
        "provider:",
        "  kind: anthropic",
        "  model: claude-sonnet-4-5",
        `  base_url: ${server.baseURL}`,
        "",
      ].join("\n"),
    );
    const env = { ...box.env, XDG_STATE_HOME: join(box.home, "state"), ANTHROPIC_API_KEY: API_KEY };
    // Naming run_command widens what the pod may do: the user trusts this workspace first.
    expect((await runPod(["trust"], { cwd: box.ws, env })).code).toBe(0);
    const run = await runPod(["run", "work"], { cwd: box.ws, env });
    expect([run.code, run.stdout]).toEqual([0, "done\n"]);
    // One request per model call: the command's curl never reached the provider.
    expect(server.requests).toHaveLength(replies.length);
    const tools = ((server.requests[0]!.json as Json).tools as { name: string }[]).map((tool) => tool.name);
    expect(tools).toEqual(["read_file", "run_command"]);

    const results = server.requests.slice(1).map(toolResult);
    const all = results.map((r) => r.text).join("\n");
    expect(all).not.toContain(readFileSync(key, "utf8").trim());
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain("ANTHROPIC");
    expect(results[0]!.text).toContain("cat: /etc/shadow: Permission denied");
    expect(results[1]!.text).toContain("Read-only file system");
    expect(results[2]!.text).toContain(`HOME=${box.ws}`);
    expect(results[3]!.text).not.toContain('"type"');
    expect(results[4]!.text).toMatch(/^killed: still running after 1000 ms/);
    expect(results[5]!.text).toContain(" M notes.txt");
    expect(results[5]!.text).toContain("+two");
    expect(results[6]).toMatchObject({ isError: true });
    expect(results[6]!.text).toContain('run_command: unknown field "sandbox"');
    // Checked from outside.
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(box.ws, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(readFileSync(join(box.ws, ".git", "config"), "utf8")).not.toMatch(/\nx\n/);
    expect(processesWith(marker)).toEqual([]);
  });

  test("network_true_from_the_users_manifest_reaches_a_loopback_server", async () => {
    let providerPort = "";
    const server = await startFakeProvider((_request, index) =>
      index === 0
        ? {
            toolCalls: [
              {
                id: "t1",
                name: "run_command",
                input: {
                  command: `curl -sS -o /dev/null -w '%{http_code}' http://127.0.0.1:${providerPort}/v1/messages -d '{}'`,
                },
              },
            ],
          }
        : { text: "done" },
    );
    fake = server;
    providerPort = new URL(server.baseURL).port;
    // In the user's own manifest: from an untrusted checkout, network: true is UNTRUSTED_WORKSPACE.
    await box.write(
      "insomnia/pod.yaml",
      [
        "worker:",
        "  tools: [run_command]",
        "  run_command: { network: true }",
        "provider:",
        "  kind: anthropic",
        "  model: claude-sonnet-4-5",
        `  base_url: ${server.baseURL}`,
        "",
      ].join("\n"),
      box.xdg,
    );
    const env = { ...box.env, XDG_STATE_HOME: join(box.home, "state"), ANTHROPIC_API_KEY: API_KEY };
    const run = await runPod(["run", "work"], { cwd: box.ws, env });
    expect(run.code).toBe(0);
    // The command's request reached the provider: it is recorded between the two model calls.
    expect(server.requests).toHaveLength(3);
  });
});

// Root without a pids cgroup (a container with a read-only cgroup file system is the common
// case): made here with a private mount namespace whose /sys/fs/cgroup is an empty tmpfs.
const CAN_HIDE_CGROUPS =
  process.geteuid?.() === 0 &&
  (() => {
    try {
      execFileSync("unshare", ["-m", "sh", "-c", "mount -t tmpfs none /sys/fs/cgroup"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();

describe("run_command where a command's processes cannot be bounded", () => {
  test.runIf(CAN_HIDE_CGROUPS)("pod_check_warns_process_limit_unavailable_and_still_exits_0", async () => {
    await box.write(".insomnia/pod.yaml", "worker:\n  tools: [read_file, run_command]\n");
    expect((await runPod(["trust"], { cwd: box.ws, env: box.env })).code).toBe(0);
    const check = spawnSync(
      "unshare",
      ["-m", "sh", "-c", 'mount -t tmpfs none /sys/fs/cgroup && exec "$@"', "sh", process.execPath, BIN, "check"],
      { cwd: box.ws, env: { PATH: process.env.PATH ?? "", ...box.env }, encoding: "utf8" },
    );
    expect(check.status).toBe(0);
    const stderr = check.stderr;
    expect(stderr).toMatch(
      /^\.insomnia\/pod\.yaml:2:10: warning: PROCESS_LIMIT_UNAVAILABLE: run_command's processes are not bounded here: pod runs as root \(which RLIMIT_NPROC does not limit\) and no pids cgroup can be made .*a fork bomb can fill the machine's process table until then \(run pod as a user other than root, or as root where a pids cgroup can be made/,
    );
  });
});
