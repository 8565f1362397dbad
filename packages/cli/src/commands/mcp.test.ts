import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider, FakeReply, RecordedRequest } from "@insomnia/ai-sdk/testing";
import * as manifestPackage from "@insomnia/manifest";
import { afterEach, describe, expect, test } from "vitest";
import { FIXTURES, pidFile, pidsIn, startHttpFixture, survivors } from "../../../mcp/src/__fixtures__/servers.ts";
import { spawn } from "node:child_process";
import { BIN, runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";
import type { PodRun } from "../__fixtures__/sandbox.ts";

const { box } = useSandbox();
const NOW = "2026-03-04T05:06:07Z";
const INSTRUCTION = 'You are the test pod.\nTools: {{join tools ", "}}\n';

let fake: FakeProvider | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  for (const stop of stops.splice(0)) stop();
});

type Json = Record<string, unknown>;
const body = (r: RecordedRequest | undefined): Json => r?.json as Json;
const toolsOf = (r: RecordedRequest | undefined): string => JSON.stringify(body(r).tools);
const namesOf = (r: RecordedRequest | undefined): string[] =>
  (body(r).tools as { name: string }[]).map((tool) => tool.name);
const systemOf = (r: RecordedRequest | undefined): string => (body(r).system as Json[])[0]!.text as string;
/** The tool result the request at `index` ends with. */
const resultOf = (server: FakeProvider, index: number): Json => {
  const messages = body(server.requests[index]).messages as { content: Json[] }[];
  return messages.at(-1)!.content[0]!;
};

async function serve(replies: FakeReply[]): Promise<FakeProvider> {
  fake = await startFakeProvider((_request, index) => replies[index] ?? { text: "(no more replies)" });
  return fake;
}

/**
 * A stdio server entry of the fixture, its processes recorded in `pids`. Its startup timeout is
 * generous (a loaded CI machine can take seconds to load the SDK in a fixture, and again at a
 * restart) yet inside the test timeout, so a slow start is reported by pod, not by Vitest.
 */
function stdioServer(name: string, pids: string, extra: string[] = [], env: Record<string, string> = {}): string[] {
  return [
    `  ${name}:`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(FIXTURES.stdio)}]`,
    `    env: ${JSON.stringify({ PID_FILE: pids, ...env })}`,
    "    startup_timeout_ms: 20000",
    ...extra.map((line) => `    ${line}`),
  ];
}

/**
 * A workspace whose manifest points at the fake provider; `servers` are declared in the user
 * layer (a checkout's own layer may not start programs until it is trusted).
 */
async function workspace(server: FakeProvider | undefined, servers: string[]): Promise<Record<string, string>> {
  await box.write(".insomnia/prompts/instruction.md", INSTRUCTION);
  await box.write(
    ".insomnia/pod.yaml",
    [
      "worker:",
      '  instruction: "$workspace/instruction"',
      "  tools: [read_file]",
      ...(server === undefined
        ? []
        : ["provider:", "  kind: anthropic", "  model: claude-sonnet-4-5", `  base_url: ${server.baseURL}`]),
      "",
    ].join("\n"),
  );
  await box.write("insomnia/pod.yaml", ["mcp_servers:", ...servers, ""].join("\n"), box.xdg);
  return workspaceEnv();
}

function workspaceEnv(): Record<string, string> {
  return { ...box.env, XDG_STATE_HOME: join(box.home, "state"), ANTHROPIC_API_KEY: "sk-ant-test" };
}

const pod = (env: Record<string, string>, ...args: string[]): Promise<PodRun> =>
  runPodInProcess(args, { cwd: box.ws, env });

describe("MCP servers in pod run, prompt and check", () => {
  test("tools_from_stdio_and_http_servers_are_in_the_prompt_and_the_request_sorted_and_a_call_round_trips", async () => {
    const pids = pidFile();
    const web = await startHttpFixture();
    stops.push(web.stop);
    const server = await serve([
      { toolCalls: [{ id: "t1", name: "mcp__fx__echo", input: { text: "hi" } }] },
      { toolCalls: [{ id: "t2", name: "mcp__web__zeta", input: {} }] },
      { text: "done" },
    ]);
    const env = await workspace(server, [
      ...stdioServer("fx", pids, ["enabled_tools: [zeta, echo]"]),
      "  web:",
      `    url: ${web.url}`,
      "    disabled_tools: [big, crash, hang, image, fail, grow, pid, malformed]",
    ]);
    const expected = ["mcp__fx__echo", "mcp__fx__zeta", "mcp__web__echo", "mcp__web__zeta", "read_file"];

    const prompt = await pod(env, "prompt", "--now", NOW);
    expect([prompt.code, prompt.stderr]).toEqual([0, ""]);
    expect(prompt.stdout).toContain(`Tools: ${expected.join(", ")}\n`);
    expect(prompt.stdout).toMatch(
      /Tools named mcp__<server>__<tool> come from MCP servers and are not bound by these boundaries/,
    );

    const run = await pod(env, "run", "use the servers");
    expect([run.code, run.stdout]).toEqual([0, "done\n"]);
    expect(namesOf(server.requests[0])).toEqual(expected);
    expect(systemOf(server.requests[0])).toBe(prompt.stdout);
    expect(resultOf(server, 1)).toMatchObject({ type: "tool_result", tool_use_id: "t1" });
    expect(JSON.stringify(resultOf(server, 1))).toContain("echo: hi");
    expect(JSON.stringify(resultOf(server, 2))).toContain("ζ");
    // Every request of the conversation offers the same tools, byte for byte.
    expect(new Set(server.requests.map(toolsOf)).size).toBe(1);
    expect(await survivors(pidsIn(pids))).toEqual([]);
    expect(pidsIn(pids).length).toBe(4); // prompt and run each started the server and its child
  });

  test("pod_check_and_prompt_explain_show_each_server_its_state_and_its_tools", async () => {
    const pids = pidFile();
    const env = await workspace(undefined, [
      ...stdioServer("fx", pids, ["enabled_tools: [zeta]"]),
      "  stuck:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(FIXTURES.hang)}]`,
      `    env: { PID_FILE: ${JSON.stringify(pids)} }`,
      "    startup_timeout_ms: 300",
    ]);
    const check = await pod(env, "check");
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("mcp server fx (stdio): ready, 1 tool: mcp__fx__zeta\n");
    expect(check.stdout).toMatch(
      /mcp server stuck \(stdio\): failed \(it did not start and list its tools within 300 ms\), 0 tools\n/,
    );
    expect(check.stderr).toContain("MCP_SERVER_UNAVAILABLE");

    const explain = await pod(env, "prompt", "--explain", "--now", NOW);
    expect(explain.code).toBe(0);
    expect(explain.stdout).toContain(
      "MCP servers\n  fx (stdio): ready\n    tools: mcp__fx__zeta\n  stuck (stdio): failed",
    );
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  test("a_server_that_never_answers_initialize_does_not_hold_the_first_request_past_its_timeout", async () => {
    const pids = pidFile();
    const server = await serve([{ text: "hello" }]);
    const env = await workspace(server, [
      ...stdioServer("fx", pids, ["enabled_tools: [zeta]"]),
      "  stuck:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(FIXTURES.hang)}]`,
      `    env: { PID_FILE: ${JSON.stringify(pids)} }`,
      "    startup_timeout_ms: 500",
    ]);
    const run = await pod(env, "run", "hi");
    expect([run.code, run.stdout]).toEqual([0, "hello\n"]);
    expect(run.stderr).toMatch(
      /MCP_SERVER_UNAVAILABLE: MCP server "stuck" did not start: it did not start and list its tools within 500 ms/,
    );
    expect(namesOf(server.requests[0])).toEqual(["mcp__fx__zeta", "read_file"]);
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  test("a_crash_mid_call_and_a_10_mb_answer_are_results_the_model_sees", async () => {
    const pids = pidFile();
    const server = await serve([
      { toolCalls: [{ id: "t1", name: "mcp__fx__crash", input: {} }] },
      { toolCalls: [{ id: "t2", name: "mcp__fx__zeta", input: {} }] },
      { toolCalls: [{ id: "t3", name: "mcp__fx__big", input: {} }] },
      { text: "survived" },
    ]);
    const env = await workspace(server, stdioServer("fx", pids));
    const run = await pod(env, "run", "break it");
    expect([run.code, run.stdout]).toEqual([0, "survived\n"]);
    expect(resultOf(server, 1)).toMatchObject({ tool_use_id: "t1", is_error: true });
    expect(JSON.stringify(resultOf(server, 1))).toContain("restarted for the next call");
    expect(JSON.stringify(resultOf(server, 2))).toContain("ζ");
    const big = JSON.stringify(resultOf(server, 3));
    expect(big).toContain("[truncated: the tool returned 10000000 bytes of text; only the first 262144 are shown]");
    expect(big.length).toBeLessThan(300_000);
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  test("tools_list_changed_mid_conversation_leaves_the_request_tools_byte_identical", async () => {
    const pids = pidFile();
    const server = await serve([
      { toolCalls: [{ id: "t1", name: "mcp__fx__grow", input: {} }] },
      { toolCalls: [{ id: "t2", name: "mcp__fx__zeta", input: {} }] },
      { text: "grown" },
      { text: "still the same" },
    ]);
    const env = await workspace(server, stdioServer("fx", pids));
    expect((await pod(env, "run", "grow")).code).toBe(0);
    expect(JSON.stringify(resultOf(server, 1))).toContain("grew");
    expect((await pod(env, "run", "again")).code).toBe(0);
    expect(server.requests).toHaveLength(4);
    expect(new Set(server.requests.map(toolsOf)).size).toBe(1);
    expect(namesOf(server.requests[3])).not.toContain("mcp__fx__grown0");
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  test("a_restore_with_a_changed_server_sends_the_stored_definitions_and_warns", async () => {
    const pids = pidFile();
    const server = await serve([
      { text: "first" },
      { toolCalls: [{ id: "t1", name: "mcp__fx__zeta", input: {} }] },
      { text: "second" },
    ]);
    const env = await workspace(server, stdioServer("fx", pids));
    expect((await pod(env, "run", "one")).code).toBe(0);
    await workspace(server, stdioServer("fx", pids, [], { FIXTURE_VARIANT: "changed" }));
    const second = await pod(env, "run", "two");
    expect([second.code, second.stdout]).toEqual([0, "second\n"]);
    expect(second.stderr).toMatch(
      /TOOLS_CHANGED: MCP server "fx" now lists other tools than this conversation recorded/,
    );
    expect(toolsOf(server.requests[1])).toBe(toolsOf(server.requests[0]));
    expect(toolsOf(server.requests[2])).toBe(toolsOf(server.requests[0]));
    expect(resultOf(server, 2)).toMatchObject({ tool_use_id: "t1", is_error: true });
    expect(JSON.stringify(resultOf(server, 2))).toContain("does not offer zeta any more");
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  // Pending until the trust mechanism (issue 26, branch trust) is on main: it runs as soon as
  // @insomnia/manifest has its widening rules, and then needs mcp_servers among them.
  test.runIf("WIDENING_RULES" in manifestPackage)(
    "an_untrusted_checkout_declaring_a_server_is_refused_and_starts_no_process",
    async () => {
      const pids = pidFile();
      const server = await serve([{ text: "must not be asked" }]);
      await workspace(server, []);
      // No servers of the user's own (an empty `mcp_servers:` would be a null mapping); the checkout declares one.
      await box.write("insomnia/pod.yaml", "", box.xdg);
      await box.write(".insomnia/pod.yaml", ["mcp_servers:", ...stdioServer("evil", pids), ""].join("\n"));
      const env = await workspaceEnv();
      for (const args of [["run", "hi"], ["prompt"], ["check"]]) {
        const refused = await pod(env, ...args);
        expect([refused.code, refused.stderr]).toEqual([
          1,
          expect.stringMatching(/pod\.yaml:\d+:\d+: UNTRUSTED_WORKSPACE: mcp_servers\.evil/),
        ]);
      }
      expect(server.requests).toHaveLength(0);
      expect(pidsIn(pids)).toEqual([]);
    },
  );

  /** Starts `pod run` against a provider that never answers; resolves once the request arrived. */
  async function runningPod(pids: string, serverEnv: Record<string, string> = {}) {
    const server = await serve([{ hang: true }]);
    const env = await workspace(server, stdioServer("fx", pids, ["enabled_tools: [zeta]"], serverEnv));
    const child = spawn(process.execPath, [BIN, "run", "hi"], {
      cwd: box.ws,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    return { child, exited, stderr: () => stderr };
  }

  test("ctrl_c_stops_the_turn_and_every_server_process", async () => {
    const pids = pidFile();
    const running = await runningPod(pids);
    expect(pidsIn(pids)).toHaveLength(2);
    running.child.kill("SIGINT");
    expect(await running.exited).toBe(130);
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  test("sigterm_stops_the_turn_and_the_servers_gracefully_with_their_children", async () => {
    const pids = pidFile();
    const terms = join(box.home, "terms");
    const running = await runningPod(pids, { TERM_FILE: terms });
    expect(pidsIn(pids)).toHaveLength(2);
    running.child.kill("SIGTERM");
    expect(await running.exited).toBe(143);
    // Checked from outside: the server and the `sleep` it started are gone.
    expect(await survivors(pidsIn(pids))).toEqual([]);
    // Asked to stop (SIGTERM to its group), not killed outright.
    expect(existsSync(terms) ? readFileSync(terms, "utf8") : "(nothing recorded: killed)").toBe("SIGTERM\n");
  });

  test("a_killed_pod_does_not_leave_its_server_or_the_servers_children_running", async () => {
    const pids = pidFile();
    const running = await runningPod(pids);
    const started = pidsIn(pids);
    expect(started).toHaveLength(2);
    running.child.kill("SIGKILL");
    await running.exited;
    try {
      // No code of pod runs after SIGKILL: the watchdog kills the server's process group.
      expect(await survivors(started)).toEqual([]);
    } finally {
      for (const pid of await survivors(started, 0)) process.kill(pid, "SIGKILL");
    }
  });
});
