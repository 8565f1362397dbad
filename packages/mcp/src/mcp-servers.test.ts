import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, inject, test } from "vitest";
import { McpError } from "./mcp-error.ts";
import { McpServers } from "./mcp-servers.ts";
import type { McpServersOptions } from "./mcp-servers.ts";
import { MAX_RESULT_BYTES } from "./result-text.ts";
import type { McpServerConfig } from "./server-config.ts";
import { FIXTURES, pidFile, pidsIn, startHttpFixture, survivors } from "./__fixtures__/servers.ts";

const open: McpServers[] = [];
const stops: (() => void)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((servers) => servers.close()));
  for (const stop of stops.splice(0)) stop();
});

/** FIXTURES.stdio bundled with the SDK by the global setup: the same server, quicker to start. */
const STDIO_SERVER = inject("mcpStdioFixture");

// A generous startup timeout: a loaded CI machine can take seconds to load the SDK in a fixture.
function stdio(name: string, extra: Partial<McpServerConfig> = {}, env: Record<string, string> = {}): McpServerConfig {
  const transport = { type: "stdio", command: process.execPath, args: [STDIO_SERVER], env } as const;
  return { name, transport, startupTimeoutMs: 60_000, ...extra };
}

function servers(configs: McpServerConfig[], options: Partial<McpServersOptions> = {}): McpServers {
  const set = new McpServers(configs, { cwd: import.meta.dirname, ...options });
  open.push(set);
  return set;
}

// The tests that only list the fixture's tools or make calls that leave it as it was share one
// started server; the first of them to run starts it.
let shared: McpServers | undefined;
function sharedFx(): McpServers {
  shared ??= new McpServers([stdio("fx")], { cwd: import.meta.dirname });
  return shared;
}
afterAll(async () => {
  await shared?.close();
});

async function call(set: McpServers, name: string, input: unknown = {}, signal?: AbortSignal): Promise<string> {
  const tool = (await set.start()).find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return (tool.execute as (input: unknown, options?: { signal?: AbortSignal }) => Promise<string>)(
    input,
    signal === undefined ? {} : { signal },
  );
}

async function failure(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!McpError.is(error)) throw new Error(`expected an McpError, got ${String(error)}`);
  return error;
}

describe("stdio servers", () => {
  test("tools_are_named_by_server_and_sorted", async () => {
    const set = sharedFx();
    const names = (await set.start()).map((tool) => tool.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain("mcp__fx__echo");
    expect(names[0]).toBe("mcp__fx__big");
    expect(set.status()).toEqual([
      expect.objectContaining({ name: "fx", transport: "stdio", state: "ready", tools: names }),
    ]);
  });

  test("a_call_round_trips_and_a_reported_failure_is_an_error", async () => {
    const set = sharedFx();
    expect(await call(set, "mcp__fx__echo", { text: "hi" })).toBe("echo: hi");
    const error = await failure(call(set, "mcp__fx__fail"));
    expect(error.code).toBe("TOOL_FAILED");
    expect(error.message).toContain("the fixture failed on purpose");
  });

  test("enabled_and_disabled_tools_filter_the_list", async () => {
    const set = servers([
      stdio("a", { enabledTools: ["echo", "zeta"] }),
      stdio("b", { disabledTools: ["big", "crash", "hang", "image", "fail", "grow", "pid", "malformed"] }),
    ]);
    expect((await set.start()).map((tool) => tool.name)).toEqual([
      "mcp__a__echo",
      "mcp__a__zeta",
      "mcp__b__echo",
      "mcp__b__zeta",
    ]);
  });

  test("a_name_over_64_characters_is_left_out_with_a_warning", async () => {
    const long = "s".repeat(54); // mcp__ + 54 + __ + "echo" = 65; + "big" = 64
    const set = servers([stdio(long, { enabledTools: ["echo", "big"] })]);
    const tools = await set.start();
    expect(tools.map((tool) => tool.name)).toEqual([`mcp__${long}__big`]);
    expect(set.warnings).toEqual([
      expect.objectContaining({ code: "MCP_TOOL_NAME_REFUSED", server: long, message: expect.stringContaining("64") }),
    ]);
  });

  test("a_tool_listed_twice_is_offered_once_with_a_warning", async () => {
    const set = servers([stdio("fx", { enabledTools: ["echo"] }, { FIXTURE_VARIANT: "dupes" })]);
    expect((await set.start()).map((tool) => tool.name)).toEqual(["mcp__fx__echo"]);
    expect(set.warnings).toEqual([
      expect.objectContaining({ code: "MCP_TOOL_NAME_REFUSED", message: expect.stringContaining("more than once") }),
    ]);
  });

  test("an_image_result_becomes_an_image_part_and_an_unsupported_one_a_visible_note", async () => {
    const set = sharedFx();
    const output = (await call(set, "mcp__fx__image")) as unknown as { content: string; images: unknown[] };
    expect(output.images).toEqual([
      { mediaType: "image/png", data: Buffer.from("not really a png").toString("base64") },
    ]);
    expect(output.content).toMatch(/^a pixel:\n\[image \(image\/bmp, about \d+ bytes\) not shown: only png/);
  });

  test("a_10_mb_answer_is_capped_visibly", async () => {
    const set = sharedFx();
    const text = await call(set, "mcp__fx__big");
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_RESULT_BYTES + 200);
    expect(text).toMatch(/\n\[truncated: the tool returned 10000000 bytes of text; only the first 262144 are shown\]$/);
  });

  test("a_crash_mid_call_is_an_error_and_the_server_restarts_for_the_next_call", async () => {
    const set = servers([stdio("fx")]);
    const before = await call(set, "mcp__fx__pid");
    const error = await failure(call(set, "mcp__fx__crash"));
    expect(error.code).toBe("SERVER_UNAVAILABLE");
    expect(error.message).toContain("restarted for the next call");
    const after = await call(set, "mcp__fx__pid");
    expect(after).not.toBe(before);
    expect(set.status()[0]?.state).toBe("ready");
  });

  test("a_call_past_its_timeout_is_an_error_and_the_server_restarts", async () => {
    const set = servers([stdio("fx", { toolTimeoutMs: 300 })]);
    const error = await failure(call(set, "mcp__fx__hang"));
    expect(error.code).toBe("TOOL_TIMEOUT");
    expect(await call(set, "mcp__fx__zeta")).toBe("ζ");
  });

  test("a_malformed_answer_is_an_error_and_the_server_restarts", async () => {
    const set = servers([stdio("fx")]);
    const before = await call(set, "mcp__fx__pid");
    const error = await failure(call(set, "mcp__fx__malformed"));
    expect(error.code).toBe("MALFORMED_RESULT");
    expect(await call(set, "mcp__fx__pid")).not.toBe(before);
  });

  test("the_turn_signal_stops_a_call", async () => {
    const set = servers([stdio("fx")]);
    const controller = new AbortController();
    const pending = call(set, "mcp__fx__hang", {}, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect((await failure(pending)).code).toBe("ABORTED");
    expect(await call(set, "mcp__fx__zeta")).toBe("ζ");
  });

  test("tools_list_changed_never_changes_the_list", async () => {
    const set = servers([stdio("fx")]);
    const before = JSON.stringify(await set.start());
    expect(await call(set, "mcp__fx__grow")).toBe("grew");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(JSON.stringify(await set.start())).toBe(before);
  });

  test("close_stops_the_whole_process_tree", async () => {
    const pids = pidFile();
    const set = servers([stdio("fx", {}, { PID_FILE: pids })]);
    await set.start();
    expect(pidsIn(pids)).toHaveLength(2);
    await set.close();
    expect(await survivors(pidsIn(pids))).toEqual([]);
    expect(set.status()[0]?.state).toBe("stopped");
  });
});

describe("startup", () => {
  test("a_server_that_never_answers_initialize_is_left_out_after_its_timeout", async () => {
    const pids = pidFile();
    const set = servers([
      stdio("good", { enabledTools: ["zeta"] }),
      {
        name: "stuck",
        transport: { type: "stdio", command: process.execPath, args: [FIXTURES.hang], env: { PID_FILE: pids } },
        startupTimeoutMs: 300,
      },
    ]);
    expect((await set.start()).map((tool) => tool.name)).toEqual(["mcp__good__zeta"]);
    expect(set.warnings).toEqual([
      expect.objectContaining({
        code: "MCP_SERVER_UNAVAILABLE",
        server: "stuck",
        message: expect.stringContaining("300 ms"),
      }),
    ]);
    expect(set.status().find((s) => s.name === "stuck")?.state).toBe("failed");
    await set.close();
    expect(await survivors(pidsIn(pids))).toEqual([]);
  });

  test("a_server_starts_without_running_the_users_shell_startup_file", async () => {
    // bash reads ~/.bashrc when its input is a socket, as Node's pipes are, unless told not to.
    const home = mkdtempSync(join(tmpdir(), "insomnia-mcp-home-"));
    stops.push(() => rmSync(home, { recursive: true, force: true }));
    writeFileSync(
      join(home, ".bashrc"),
      `echo "not a JSON-RPC message"\necho ran > ${JSON.stringify(join(home, "ran"))}\n`,
    );
    const set = servers([stdio("fx", {}, { HOME: home })]);
    expect(await call(set, "mcp__fx__echo", { text: "hi" })).toBe("echo: hi");
    expect(existsSync(join(home, "ran"))).toBe(false);
  });

  test("a_command_that_does_not_exist_is_a_warning", async () => {
    const set = servers([{ name: "nope", transport: { type: "stdio", command: "/nonexistent/mcp-server" } }]);
    expect(await set.start()).toEqual([]);
    expect(set.warnings[0]?.code).toBe("MCP_SERVER_UNAVAILABLE");
  });
});

describe("streamable HTTP servers", () => {
  test("tools_and_calls_over_http_with_a_header_from_the_environment", async () => {
    const fixture = await startHttpFixture({ REQUIRE_TOKEN: "sesame" });
    stops.push(fixture.stop);
    const set = servers(
      [
        {
          name: "web",
          transport: { type: "http", url: fixture.url, headersFromEnv: { Authorization: "FIXTURE_AUTH" } },
          enabledTools: ["echo", "zeta"],
        },
      ],
      { env: { FIXTURE_AUTH: "Bearer sesame" } },
    );
    expect((await set.start()).map((tool) => tool.name)).toEqual(["mcp__web__echo", "mcp__web__zeta"]);
    expect(await call(set, "mcp__web__echo", { text: "over http" })).toBe("echo: over http");
  });

  test("a_missing_header_variable_is_a_warning", async () => {
    const set = servers(
      [
        {
          name: "web",
          transport: { type: "http", url: "http://127.0.0.1:9/mcp", headersFromEnv: { Authorization: "NOPE" } },
        },
      ],
      { env: {} },
    );
    expect(await set.start()).toEqual([]);
    expect(set.warnings[0]?.message).toContain("NOPE");
  });
});

describe("frozen tool lists (restore)", () => {
  test("stored_definitions_are_offered_and_a_changed_server_warns", async () => {
    const stored = (await sharedFx().start()).map(({ name, description, inputSchema }) => ({
      name,
      description,
      inputSchema,
    }));

    const restored = servers([stdio("fx", {}, { FIXTURE_VARIANT: "changed" })], { frozen: stored });
    const tools = await restored.start();
    expect(
      JSON.stringify(tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))),
    ).toBe(JSON.stringify(stored));
    expect(restored.warnings).toEqual([
      expect.objectContaining({
        code: "TOOLS_CHANGED",
        server: "fx",
        message: expect.stringContaining("mcp__fx__zeta"),
      }),
    ]);
    expect((await failure(call(restored, "mcp__fx__zeta"))).code).toBe("TOOL_VANISHED");
    expect(await call(restored, "mcp__fx__echo", { text: "x" })).toBe("ECHO: x");
  });

  test("a_tool_of_a_server_no_longer_configured_fails_as_vanished", async () => {
    const set = servers([], { frozen: [{ name: "mcp__gone__x", description: "", inputSchema: { type: "object" } }] });
    expect((await failure(call(set, "mcp__gone__x"))).code).toBe("TOOL_VANISHED");
    expect(set.warnings).toEqual([
      expect.objectContaining({
        code: "TOOLS_CHANGED",
        server: "gone",
        message: expect.stringContaining("no longer configured"),
      }),
    ]);
  });
});
