import { Worker } from "@insomnia/worker";
import type { Tool } from "@insomnia/worker";
import { afterEach, describe, expect, test, vi } from "vitest";
import { aiSdkClient } from "./ai-sdk-client.ts";
import { AiSdkError } from "./ai-sdk-error.ts";
import { createAnthropic, createOpenAI, createOpenAICompatible } from "./__fixtures__/models.ts";
import { startFakeProvider } from "./fake-provider.ts";
import type { FakeProvider, FakeReply, RecordedRequest } from "./fake-provider.ts";

const PROMPT = "You are a careful agent.\n\n---\n## Working boundaries\n\nReadable:\n  - /tmp/ws  \n\n";

const readTool: Tool = {
  name: "read_file",
  description: "Reads a file.",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  execute: (input) => `contents of ${(input as { path: string }).path}`,
};
const echoTool: Tool = {
  name: "echo",
  description: "Echoes its input.",
  inputSchema: { type: "object", properties: {} },
  execute: (input) => JSON.stringify(input),
};

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function serve(replies: FakeReply[] | ((r: RecordedRequest, i: number) => FakeReply)): Promise<FakeProvider> {
  fake = await startFakeProvider((request, index) =>
    typeof replies === "function" ? replies(request, index) : (replies[index] ?? { text: "(no more replies)" }),
  );
  return fake;
}

const anthropicModel = (server: FakeProvider) =>
  createAnthropic({ baseURL: server.baseURL, apiKey: "test-key" })("claude-sonnet-4-5");

function worker(client: ReturnType<typeof aiSdkClient>, tools: Tool[] = [readTool, echoTool]): Worker {
  const w = new Worker({ client });
  for (const tool of tools) w.tools.register(tool);
  w.setSystemPrompt(PROMPT);
  return w;
}

type Json = Record<string, unknown>;
const body = (r: RecordedRequest | undefined): Json => r?.json as Json;

describe("anthropic messages", () => {
  test("system_prompt_goes_out_untouched_with_a_cache_breakpoint_on_every_request", async () => {
    const server = await serve([
      { toolCalls: [{ id: "toolu_1", name: "read_file", input: { path: "a.txt" } }] },
      { text: "a.txt is read." },
      { text: "second turn." },
    ]);
    const w = worker(aiSdkClient(anthropicModel(server), { maxOutputTokens: 321, temperature: 0.5 }));
    await w.run("read a.txt");
    await w.run("and again");
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      const json = body(request);
      expect(json.system).toEqual([{ type: "text", text: PROMPT, cache_control: { type: "ephemeral" } }]);
      expect(request.body).toContain(`"system":[{"type":"text","text":${JSON.stringify(PROMPT)},`);
      expect(json.max_tokens).toBe(321);
      expect(json.temperature).toBe(0.5);
      expect((json.tools as Json[]).map((t) => t.name)).toEqual(["echo", "read_file"]);
      // system + the last message: two breakpoints, within Anthropic's four.
      expect(request.body.match(/"cache_control"/g)).toHaveLength(2);
      const messages = json.messages as { content: Json[] }[];
      expect(messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    }
  });

  test("a_tool_schema_changed_during_a_call_reaches_the_next_request_not_the_one_in_flight", async () => {
    const server = await serve([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const client = aiSdkClient(anthropicModel(server));
    const schema: Record<string, unknown> = { type: "object", properties: { path: { type: "string" } } };
    const tools = [{ name: "read_file", description: "Reads a file.", inputSchema: schema }];
    const request = { systemPrompt: PROMPT, messages: [{ role: "user" as const, content: "hi" }], tools };
    const first = client.complete(request);
    schema.required = ["path"];
    await first;
    await client.complete(request);
    await client.complete(request);
    const sent = server.requests.map((r) => (body(r).tools as Json[])[0]?.input_schema);
    expect(sent).toEqual([
      { type: "object", properties: { path: { type: "string" } } },
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    ]);
    // The caller's schema is left as it is (the copy is what is frozen).
    expect(Object.isFrozen(schema)).toBe(false);
  });

  test("a_tool_schema_changed_between_streamed_calls_reaches_the_next_request", async () => {
    // Streamed calls hand the AI SDK a tool set made once per converted tool: a changed schema is a new one.
    const server = await serve([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const client = aiSdkClient(anthropicModel(server));
    const schema: Record<string, unknown> = { type: "object", properties: { path: { type: "string" } } };
    const tools = [{ name: "read_file", description: "Reads a file.", inputSchema: schema }];
    const request = { systemPrompt: PROMPT, messages: [{ role: "user" as const, content: "hi" }], tools };
    const listen = { onEvent: () => undefined };
    await client.complete(request, listen);
    schema.required = ["path"];
    await client.complete(request, listen);
    await client.complete(request, listen);
    const sent = server.requests.map((r) => (body(r).tools as Json[])[0]?.input_schema);
    expect(sent).toEqual([
      { type: "object", properties: { path: { type: "string" } } },
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    ]);
    expect(server.requests.map((r) => body(r).stream)).toEqual([true, true, true]);
  });

  test("tool_calls_round_trip_and_history_only_grows_at_its_end", async () => {
    const server = await serve([
      { text: "Let me look.", toolCalls: [{ id: "toolu_1", name: "read_file", input: { path: "a.txt" } }] },
      { text: "Done." },
    ]);
    const w = worker(aiSdkClient(anthropicModel(server)));
    const result = await w.run("read a.txt");
    expect(result.final).toBe("Done.");
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(result.messages[1]).toMatchObject({
      content: "Let me look.",
      toolCalls: [{ id: "toolu_1", name: "read_file", input: { path: "a.txt" } }],
    });
    const second = body(server.requests[1]).messages as Json[];
    expect(second).toEqual([
      { role: "user", content: [{ type: "text", text: "read a.txt" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.txt" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "contents of a.txt",
            cache_control: { type: "ephemeral" },
          },
        ],
      },
    ]);
    const first = body(server.requests[0]).messages as Json[];
    expect(first).toEqual([
      { role: "user", content: [{ type: "text", text: "read a.txt", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  test("usage_reaches_the_assistant_message_with_cache_figures", async () => {
    const server = await serve([{ text: "hi", usage: { input: 7, output: 3, cacheRead: 900, cacheWrite: 40 } }]);
    const w = worker(aiSdkClient(anthropicModel(server)));
    const result = await w.run("hello");
    expect(result.messages[1]).toEqual({
      role: "assistant",
      content: "hi",
      usage: { inputTokens: 947, outputTokens: 3, cacheReadTokens: 900, cacheWriteTokens: 40 },
    });
  });

  test("streaming_gives_text_as_it_arrives_and_the_same_answer", async () => {
    const server = await serve([
      { text: "Looking now.", toolCalls: [{ id: "toolu_9", name: "echo", input: { x: 1 } }], usage: { cacheRead: 5 } },
      { text: "Streamed answer." },
    ]);
    const pieces: string[] = [];
    const w = worker(aiSdkClient(anthropicModel(server), { onText: (text) => pieces.push(text) }));
    const result = await w.run("stream please");
    expect(server.requests.map((r) => r.stream)).toEqual([true, true]);
    expect(pieces.join("")).toBe("Looking now.Streamed answer.");
    expect(pieces.length).toBeGreaterThan(2);
    expect(result.final).toBe("Streamed answer.");
    expect(result.messages[1]).toMatchObject({
      toolCalls: [{ id: "toolu_9", name: "echo", input: { x: 1 } }],
      usage: { cacheReadTokens: 5, outputTokens: 5 },
    });
    expect(result.messages[2]).toEqual({ role: "tool", toolCallId: "toolu_9", name: "echo", content: '{"x":1}' });
    expect(body(server.requests[1]).system).toEqual([
      { type: "text", text: PROMPT, cache_control: { type: "ephemeral" } },
    ]);
  });

  test("unknown_tool_name_becomes_an_error_result_the_model_sees", async () => {
    const server = await serve([
      { toolCalls: [{ id: "toolu_x", name: "delete_everything", input: {} }] },
      { text: "Sorry, that tool does not exist." },
    ]);
    const w = worker(aiSdkClient(anthropicModel(server)));
    const result = await w.run("go");
    expect(result.messages[2]).toMatchObject({ role: "tool", toolCallId: "toolu_x", isError: true });
    const second = body(server.requests[1]).messages as { content: Json[] }[];
    expect(second.at(-1)?.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_x", is_error: true });
    expect(result.final).toBe("Sorry, that tool does not exist.");
  });
});

describe("openai", () => {
  test("responses_api_by_default_carries_the_prompt_first_and_a_cache_key", async () => {
    const server = await serve([
      { toolCalls: [{ id: "call_1", name: "read_file", input: { path: "b" } }] },
      { text: "ok", usage: { input: 2, output: 1, cacheRead: 50 } },
    ]);
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" })("gpt-test");
    const w = worker(aiSdkClient(model, { cacheKey: "segment-1" }));
    const result = await w.run("read b");
    expect(server.requests.map((r) => r.wire)).toEqual(["openai-responses", "openai-responses"]);
    for (const request of server.requests) {
      const json = body(request);
      expect((json.input as Json[])[0]).toEqual({ role: "system", content: PROMPT });
      expect(json.prompt_cache_key).toBe("segment-1");
      expect((json.tools as Json[]).map((t) => t.name)).toEqual(["echo", "read_file"]);
    }
    expect((body(server.requests[1]).input as Json[]).at(-1)).toMatchObject({
      type: "function_call_output",
      call_id: "call_1",
      output: "contents of b",
    });
    expect(result.messages.at(-1)).toEqual({
      role: "assistant",
      content: "ok",
      usage: { inputTokens: 52, outputTokens: 1, cacheReadTokens: 50 },
    });
  });

  test("chat_completions_carry_the_prompt_first_and_the_cache_key_of_the_call", async () => {
    const server = await serve([{ toolCalls: [{ id: "call_2", name: "echo", input: { a: 1 } }] }, { text: "fine" }]);
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" }).chat("gpt-test");
    let segment = "seg-A";
    const w = worker(aiSdkClient(model, { cacheKey: () => segment }));
    await w.run("hi");
    segment = "seg-B";
    await w.run("again");
    const keys = server.requests.map((r) => body(r).prompt_cache_key);
    expect(keys).toEqual(["seg-A", "seg-A", "seg-B"]);
    for (const request of server.requests) {
      expect((body(request).messages as Json[])[0]).toEqual({ role: "system", content: PROMPT });
    }
    expect((body(server.requests[1]).messages as Json[]).at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_2",
      content: '{"a":1}',
    });
  });

  test("chat_completions_stream_text", async () => {
    const server = await serve([{ text: "streamed chat", usage: { cacheRead: 4 } }]);
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" }).chat("gpt-test");
    const pieces: string[] = [];
    const result = await worker(aiSdkClient(model, { onText: (t) => pieces.push(t) })).run("hi");
    expect(pieces.join("")).toBe("streamed chat");
    expect(result.messages[1]).toMatchObject({ content: "streamed chat", usage: { cacheReadTokens: 4 } });
  });

  test("default_cache_key_is_one_per_prompt_and_tools", async () => {
    const server = await serve([{ text: "1" }, { text: "2" }]);
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" })("gpt-test");
    await worker(aiSdkClient(model)).run("a");
    await worker(aiSdkClient(model), [readTool]).run("b");
    const [first, second] = server.requests.map((r) => body(r).prompt_cache_key as string);
    expect(first).toMatch(/^insomnia-[0-9a-f]{40}$/);
    expect(second).toMatch(/^insomnia-[0-9a-f]{40}$/);
    expect(first).not.toBe(second);
  });

  test("openai_compatible_runs_without_a_key_and_without_cache_hints", async () => {
    const server = await serve([{ text: "local answer" }]);
    const model = createOpenAICompatible({ name: "local", baseURL: server.baseURL })("llama");
    const result = await worker(aiSdkClient(model)).run("hi");
    expect(result.final).toBe("local answer");
    const request = server.requests[0];
    expect(request?.headers.authorization).toBeUndefined();
    expect((body(request).messages as Json[])[0]).toEqual({ role: "system", content: PROMPT });
    expect(request?.body).not.toContain("cache");
  });
});

async function failure(promise: Promise<unknown>): Promise<AiSdkError> {
  try {
    await promise;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    if (AiSdkError.is(cause)) return cause;
    throw error;
  }
  throw new Error("expected a failure");
}

describe("provider failures", () => {
  const json = (status: number, message: string, headers: Record<string, string> = {}): FakeReply => ({
    status,
    headers,
    body: JSON.stringify({ type: "error", error: { type: "x", message } }),
  });

  test("bad_key_is_auth_failed_and_not_retried", async () => {
    for (const status of [401, 403]) {
      const server = await serve([json(status, "invalid x-api-key")]);
      const w = worker(aiSdkClient(anthropicModel(server)));
      const error = await failure(w.run("hi"));
      expect([error.code, error.status, error.attempts]).toEqual(["AUTH_FAILED", status, 1]);
      expect(error.detail).toMatch(/invalid x-api-key/);
      expect(error.detail).toMatch(/set a valid key/);
      expect(server.requests).toHaveLength(1);
      // The user's message stays in the history: resume() retries it.
      expect(w.getHistory()).toEqual([{ role: "user", content: "hi" }]);
      await server.close();
      fake = undefined;
    }
  });

  test("rate_limit_is_retried_honouring_retry_after_then_rate_limited", async () => {
    const server = await serve(() => json(429, "slow down", { "retry-after": "0" }));
    const error = await failure(worker(aiSdkClient(anthropicModel(server), { maxRetries: 2 })).run("hi"));
    expect([error.code, error.status, error.attempts, error.retryAfterSeconds]).toEqual(["RATE_LIMITED", 429, 3, 0]);
    expect(server.requests).toHaveLength(3);
    expect(error.detail).toMatch(/after 3 attempts and asked to wait 0s; retry later/);
  });

  test("rate_limit_then_success_answers", async () => {
    const server = await serve([json(429, "slow down", { "retry-after-ms": "1" }), { text: "made it" }]);
    const result = await worker(aiSdkClient(anthropicModel(server))).run("hi");
    expect(result.final).toBe("made it");
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.body).toBe(server.requests[1]?.body);
  });

  test("server_errors_after_retries_are_provider_unavailable", async () => {
    const server = await serve(() => json(503, "overloaded", { "retry-after-ms": "1" }));
    const error = await failure(worker(aiSdkClient(anthropicModel(server), { maxRetries: 1 })).run("hi"));
    expect([error.code, error.status, error.attempts]).toEqual(["PROVIDER_UNAVAILABLE", 503, 2]);
  });

  test("reset_connection_is_provider_unavailable", async () => {
    const server = await serve(() => ({ reset: true }));
    const error = await failure(worker(aiSdkClient(anthropicModel(server), { maxRetries: 0 })).run("hi"));
    expect(error.code).toBe("PROVIDER_UNAVAILABLE");
    expect(error.status).toBeUndefined();
    expect(error.detail).toMatch(/could not be reached/);
  });

  test("malformed_json_is_malformed_response", async () => {
    for (const reply of [
      { status: 200, body: "{not json" },
      { status: 200, body: JSON.stringify({ hello: "world" }) },
    ]) {
      const server = await serve([reply]);
      const error = await failure(worker(aiSdkClient(anthropicModel(server))).run("hi"));
      expect(error.code).toBe("MALFORMED_RESPONSE");
      await server.close();
      fake = undefined;
    }
  });

  test("other_client_errors_are_request_rejected_with_the_providers_words", async () => {
    const server = await serve([json(404, "model: claude-nope not found")]);
    const error = await failure(worker(aiSdkClient(anthropicModel(server))).run("hi"));
    expect([error.code, error.status]).toEqual(["REQUEST_REJECTED", 404]);
    expect(error.detail).toMatch(/claude-nope not found/);
    expect(error.detail).toMatch(/; check the model name and settings$/);
  });

  test("a_prompt_too_long_is_rejected_without_blaming_the_model_name", async () => {
    const server = await serve([json(400, "prompt is too long: 210000 tokens > 200000 maximum")]);
    const error = await failure(worker(aiSdkClient(anthropicModel(server))).run("hi"));
    expect([error.code, error.status]).toEqual(["REQUEST_REJECTED", 400]);
    expect(error.detail).toMatch(/prompt is too long/);
    expect(error.detail).toMatch(/no longer fits the model's context window/);
    expect(error.detail).not.toMatch(/model name/);
  });

  test("an_unreadable_answer_names_the_api_with_the_right_article", async () => {
    const server = await serve([{ status: 200, body: "{not json" }]);
    const error = await failure(worker(aiSdkClient(anthropicModel(server))).run("hi"));
    expect(error.detail).toMatch(/points at an anthropic API$/);
  });

  test("a_hanging_provider_times_out", async () => {
    const server = await serve(() => ({ hang: true }));
    const error = await failure(worker(aiSdkClient(anthropicModel(server), { timeoutMs: 50 })).run("hi"));
    expect(error.code).toBe("TIMEOUT");
  });

  test("abort_signal_stops_the_call", async () => {
    const controller = new AbortController();
    const server = await serve(() => {
      controller.abort();
      return { hang: true };
    });
    const error = await failure(
      worker(aiSdkClient(anthropicModel(server), { abortSignal: controller.signal })).run("hi"),
    );
    expect(error.code).toBe("ABORTED");
  });
});

describe("options and warnings", () => {
  test("invalid_options_are_refused_up_front", () => {
    const model = createAnthropic({ apiKey: "k" })("m");
    for (const options of [{ maxOutputTokens: 0 }, { temperature: -1 }, { maxRetries: 1.5 }, { onText: "x" }]) {
      expect(() => aiSdkClient(model, options as never)).toThrow(AiSdkError);
    }
  });

  test("sdk_warnings_never_reach_the_console_and_go_to_on_warning", async () => {
    const before = globalThis.AI_SDK_LOG_WARNINGS;
    globalThis.AI_SDK_LOG_WARNINGS = undefined;
    const warn = vi.spyOn(console, "warn");
    const info = vi.spyOn(console, "info");
    try {
      const server = await serve([{ text: "ok" }]);
      // Reasoning models take no temperature: the provider reports a warning.
      const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" })("o3-mini");
      const warnings: string[] = [];
      await worker(aiSdkClient(model, { temperature: 0.7, onWarning: (w) => warnings.push(w.message) })).run("hi");
      expect(warnings.join("\n")).toMatch(/temperature/);
      expect(warn).not.toHaveBeenCalled();
      expect(info).not.toHaveBeenCalled();
      expect(globalThis.AI_SDK_LOG_WARNINGS).toBe(false);
    } finally {
      warn.mockRestore();
      info.mockRestore();
      globalThis.AI_SDK_LOG_WARNINGS = before;
    }
  });

  test("an_applications_own_warning_setting_is_kept", async () => {
    const before = globalThis.AI_SDK_LOG_WARNINGS;
    const seen: unknown[] = [];
    const own = (options: unknown) => void seen.push(options);
    globalThis.AI_SDK_LOG_WARNINGS = own;
    try {
      const server = await serve([{ text: "ok" }]);
      const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" })("o3-mini");
      await worker(aiSdkClient(model, { temperature: 0.7 })).run("hi");
      expect(globalThis.AI_SDK_LOG_WARNINGS).toBe(own);
      expect(seen.length).toBeGreaterThan(0);
    } finally {
      globalThis.AI_SDK_LOG_WARNINGS = before;
    }
  });
});

describe("what the telemetry of a call reads", () => {
  const request = { systemPrompt: PROMPT, messages: [{ role: "user" as const, content: "hi" }], tools: [] };
  const models = {
    anthropic: (s: FakeProvider) => anthropicModel(s),
    "openai responses": (s: FakeProvider) => createOpenAI({ baseURL: s.baseURL, apiKey: "k" })("gpt-test"),
    "openai chat": (s: FakeProvider) => createOpenAI({ baseURL: s.baseURL, apiKey: "k" }).chat("gpt-test"),
  };
  const expected = {
    anthropic: { model: "claude-sonnet-4-5", responseId: "msg_1", finishReason: "end_turn" },
    "openai responses": { model: "gpt-test", responseId: "resp_1" },
    "openai chat": { model: "gpt-test", responseId: "chatcmpl-1", finishReason: "stop" },
  };
  for (const [wire, model] of Object.entries(models)) {
    for (const streamed of [false, true]) {
      test(`${wire.replace(" ", "_")}_${streamed ? "streamed" : "completed"}_answers_carry_the_model_response_id_and_finish_reason`, async () => {
        const server = await serve([{ text: "hello" }]);
        const onEvent = streamed ? () => undefined : undefined;
        const answer = await aiSdkClient(model(server)).complete(request, onEvent === undefined ? {} : { onEvent });
        expect(answer).toMatchObject({ content: "hello", ...expected[wire as keyof typeof expected] });
        // Every wire says why it stopped, in its own word.
        expect(typeof answer.finishReason).toBe("string");
      });
    }
  }
});
