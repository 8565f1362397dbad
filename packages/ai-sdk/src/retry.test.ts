import { APICallError } from "@ai-sdk/provider";
import type { LanguageModelV2, LanguageModelV2CallOptions } from "@ai-sdk/provider";
import type { LlmRequest } from "@insomnia/worker";
import { afterEach, describe, expect, test } from "vitest";
import { aiSdkClient } from "./ai-sdk-client.ts";
import { createAnthropic } from "./__fixtures__/models.ts";
import { startFakeProvider } from "./fake-provider.ts";
import type { FakeProvider, FakeReply } from "./fake-provider.ts";
import { INITIAL_RETRY_DELAY_MS, retryDelayMs, timerDelay } from "./retry.ts";
import { rejection } from "./__fixtures__/rejection.ts";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function serve(replies: FakeReply[] | (() => FakeReply)): Promise<FakeProvider> {
  fake = await startFakeProvider((_request, index) =>
    typeof replies === "function" ? replies() : (replies[index] ?? { text: "(no more replies)" }),
  );
  return fake;
}

const anthropicModel = (server: FakeProvider) =>
  createAnthropic({ baseURL: server.baseURL, apiKey: "test-key" })("claude-sonnet-4-5");

const request: LlmRequest = {
  systemPrompt: "You are careful.",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
};

const error = (status: number, headers: Record<string, string> = {}): FakeReply => ({
  status,
  headers,
  body: JSON.stringify({ type: "error", error: { type: "x", message: `status ${status}` } }),
});

/** A retry delay that waits for nothing and records what it was asked to wait. */
function recordedDelays(): { waits: number[]; delay: (ms: number) => Promise<void> } {
  const waits: number[] = [];
  return { waits, delay: async (ms) => void waits.push(ms) };
}

describe("retries", () => {
  test("server_errors_are_retried_twice_by_default_with_backoff_from_two_seconds", async () => {
    const server = await serve(() => error(503));
    const { waits, delay } = recordedDelays();
    const failure = await rejection(aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request));
    expect([failure.code, failure.status, failure.attempts]).toEqual(["PROVIDER_UNAVAILABLE", 503, 3]);
    expect(waits).toEqual([2000, 4000]);
    expect(server.requests).toHaveLength(3);
    // Every attempt sends the same bytes.
    expect(new Set(server.requests.map((r) => r.body)).size).toBe(1);
  });

  test("backoff_doubles_for_each_retry", async () => {
    const server = await serve(() => error(500));
    const { waits, delay } = recordedDelays();
    const client = aiSdkClient(anthropicModel(server), { maxRetries: 4, retryDelay: delay });
    const failure = await rejection(client.complete(request));
    expect(failure.attempts).toBe(5);
    expect(waits).toEqual([2000, 4000, 8000, 16000]);
    expect(server.requests).toHaveLength(5);
  });

  test("retry_after_ms_is_honoured_and_the_retry_answers", async () => {
    const server = await serve([error(429, { "retry-after-ms": "1500" }), { text: "made it" }]);
    const { waits, delay } = recordedDelays();
    const answer = await aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request);
    expect(answer.content).toBe("made it");
    expect(waits).toEqual([1500]);
    expect(server.requests).toHaveLength(2);
  });

  test("retry_after_in_seconds_is_honoured_and_rate_limited_reports_it", async () => {
    const server = await serve(() => error(429, { "retry-after": "7" }));
    const { waits, delay } = recordedDelays();
    const client = aiSdkClient(anthropicModel(server), { maxRetries: 1, retryDelay: delay });
    const failure = await rejection(client.complete(request));
    expect([failure.code, failure.attempts, failure.retryAfterSeconds]).toEqual(["RATE_LIMITED", 2, 7]);
    expect(waits).toEqual([7000]);
    expect(server.requests).toHaveLength(2);
  });

  test("a_retry_after_of_a_minute_or_more_gives_way_to_the_backoff", async () => {
    const server = await serve([error(429, { "retry-after": "120" }), { text: "ok" }]);
    const { waits, delay } = recordedDelays();
    await aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request);
    expect(waits).toEqual([INITIAL_RETRY_DELAY_MS]);
  });

  test("a_refused_or_reset_connection_is_retried", async () => {
    const server = await serve([{ reset: true }, { reset: true }, { text: "back" }]);
    const { waits, delay } = recordedDelays();
    const answer = await aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request);
    expect(answer.content).toBe("back");
    expect(waits).toEqual([2000, 4000]);
    expect(server.requests).toHaveLength(3);
  });

  test("client_errors_are_never_retried", async () => {
    for (const status of [400, 401, 403, 404, 422]) {
      const server = await serve(() => error(status, { "retry-after": "1" }));
      const { waits, delay } = recordedDelays();
      const failure = await rejection(aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request));
      expect([failure.status, failure.attempts, waits, server.requests.length]).toEqual([status, 1, [], 1]);
      await server.close();
      fake = undefined;
    }
  });

  test("timeouts_and_conflicts_are_retried", async () => {
    for (const status of [408, 409]) {
      const server = await serve([error(status), { text: `after ${status}` }]);
      const { waits, delay } = recordedDelays();
      const answer = await aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request);
      expect([answer.content, waits, server.requests.length]).toEqual([`after ${status}`, [2000], 2]);
      await server.close();
      fake = undefined;
    }
  });

  test("max_retries_zero_sends_one_request", async () => {
    const server = await serve(() => error(503));
    const { waits, delay } = recordedDelays();
    const client = aiSdkClient(anthropicModel(server), { maxRetries: 0, retryDelay: delay });
    const failure = await rejection(client.complete(request));
    expect([failure.code, failure.attempts, waits, server.requests.length]).toEqual(["PROVIDER_UNAVAILABLE", 1, [], 1]);
  });

  test("a_malformed_answer_is_not_retried", async () => {
    const server = await serve(() => ({ status: 200, body: "{not json" }));
    const { waits, delay } = recordedDelays();
    const failure = await rejection(aiSdkClient(anthropicModel(server), { retryDelay: delay }).complete(request));
    expect([failure.code, failure.attempts, waits, server.requests.length]).toEqual(["MALFORMED_RESPONSE", 1, [], 1]);
  });

  test("a_streamed_call_is_retried_before_its_answer_starts", async () => {
    const server = await serve([error(529), { text: "streamed after a retry" }]);
    const { waits, delay } = recordedDelays();
    const pieces: string[] = [];
    const client = aiSdkClient(anthropicModel(server), { retryDelay: delay, onText: (t) => pieces.push(t) });
    const answer = await client.complete(request);
    expect(answer.content).toBe("streamed after a retry");
    expect(pieces.join("")).toBe("streamed after a retry");
    expect(server.requests.map((r) => r.stream)).toEqual([true, true]);
    expect(waits).toEqual([2000]);
  });

  test("abort_during_the_wait_stops_without_another_request", async () => {
    const server = await serve(() => error(503));
    const controller = new AbortController();
    const client = aiSdkClient(anthropicModel(server), {
      abortSignal: controller.signal,
      retryDelay: (ms, signal) => {
        controller.abort();
        return timerDelay(ms, signal);
      },
    });
    const failure = await rejection(client.complete(request));
    expect([failure.code, failure.attempts]).toEqual(["ABORTED", 1]);
    expect(server.requests).toHaveLength(1);
  });

  test("the_timeout_covers_the_waits_between_attempts", async () => {
    const server = await serve(() => error(503));
    // A wait that never ends by itself: only the timeout's signal can end the call (and
    // whether it fires during the request or during the wait, it is TIMEOUT after 1 attempt).
    const waitForever = (_ms: number, signal: AbortSignal | undefined) =>
      new Promise<void>((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
    const client = aiSdkClient(anthropicModel(server), { timeoutMs: 50, retryDelay: waitForever });
    const failure = await rejection(client.complete(request));
    expect([failure.code, failure.attempts]).toEqual(["TIMEOUT", 1]);
  });

  test("retry_delay_must_be_a_function", () => {
    const model = createAnthropic({ apiKey: "k" })("m");
    expect(() => aiSdkClient(model, { retryDelay: 5 as never })).toThrow(/retryDelay must be a function/);
  });
});

describe("retry delay rule", () => {
  const withHeaders = (responseHeaders: Record<string, string>) =>
    new APICallError({ message: "x", url: "u", requestBodyValues: {}, statusCode: 429, responseHeaders });
  const now = Date.parse("2026-12-01T12:00:00Z");

  test("retry_after_as_an_http_date_waits_until_then", () => {
    expect(retryDelayMs(withHeaders({ "retry-after": "Tue, 01 Dec 2026 12:00:05 GMT" }), 2000, now)).toBe(5000);
  });

  test("retry_after_ms_wins_over_retry_after", () => {
    expect(retryDelayMs(withHeaders({ "retry-after-ms": "250", "retry-after": "9" }), 2000, now)).toBe(250);
  });

  test("a_past_date_or_garbage_falls_back_to_the_backoff", () => {
    expect(retryDelayMs(withHeaders({ "retry-after": "Tue, 01 Dec 2026 11:00:00 GMT" }), 4000, now)).toBe(4000);
    expect(retryDelayMs(withHeaders({ "retry-after": "soon" }), 4000, now)).toBe(4000);
    expect(retryDelayMs(new Error("no headers"), 4000, now)).toBe(4000);
  });

  test("a_long_retry_after_is_honoured_when_the_backoff_is_longer_still", () => {
    expect(retryDelayMs(withHeaders({ "retry-after": "70" }), 80_000, now)).toBe(70_000);
    expect(retryDelayMs(withHeaders({ "retry-after": "70" }), 8000, now)).toBe(8000);
  });
});

describe("models", () => {
  test("a_bare_model_id_without_a_default_provider_is_refused", () => {
    const before = globalThis.AI_SDK_DEFAULT_PROVIDER;
    globalThis.AI_SDK_DEFAULT_PROVIDER = undefined;
    try {
      expect(() => aiSdkClient("claude-sonnet-4-5")).toThrow(/bare id.*anthropic\("claude-sonnet-4-5"\)/);
    } finally {
      globalThis.AI_SDK_DEFAULT_PROVIDER = before;
    }
  });

  test("a_bare_model_id_goes_to_the_default_provider", async () => {
    const server = await serve([{ text: "from the default provider" }]);
    const before = globalThis.AI_SDK_DEFAULT_PROVIDER;
    const provider = createAnthropic({ baseURL: server.baseURL, apiKey: "k" });
    globalThis.AI_SDK_DEFAULT_PROVIDER = { languageModel: (id: string) => provider(id) };
    try {
      const answer = await aiSdkClient("claude-haiku-4-5").complete(request);
      expect(answer.content).toBe("from the default provider");
      expect((server.requests[0]?.json as { model?: string } | undefined)?.model).toBe("claude-haiku-4-5");
    } finally {
      globalThis.AI_SDK_DEFAULT_PROVIDER = before;
    }
  });

  test("something_that_is_not_a_language_model_is_refused", () => {
    for (const model of [{}, { specificationVersion: "v1", doGenerate() {}, doStream() {} }, null]) {
      expect(() => aiSdkClient(model as never)).toThrow(/not an AI SDK language model/);
    }
  });

  test("a_model_whose_methods_are_read_only_own_properties_is_called_streamed_and_not", async () => {
    // A wrapper as an application (or a benchmark's spy) writes it: Object.create with
    // non-writable, non-configurable methods. The client must call them, never replace them.
    const server = await serve(() => ({ text: "fine" }));
    const model = createAnthropic({ baseURL: server.baseURL, apiKey: "k" })("claude-sonnet-4-5");
    const seen: string[] = [];
    const wrapped = Object.create(model, {
      doGenerate: {
        value: (options: never) => {
          seen.push("generate");
          return model.doGenerate(options);
        },
      },
      doStream: {
        value: (options: never) => {
          seen.push("stream");
          return model.doStream(options);
        },
      },
    });
    const client = aiSdkClient(wrapped);
    expect((await client.complete(request)).content).toBe("fine");
    expect((await client.complete(request, { onEvent: () => undefined })).content).toBe("fine");
    expect(seen).toEqual(["generate", "stream"]);
  });

  test("a_specification_v2_model_is_called_and_its_flat_usage_read", async () => {
    const calls: LanguageModelV2CallOptions[] = [];
    const v2: LanguageModelV2 = {
      specificationVersion: "v2",
      provider: "legacy.chat",
      modelId: "old-model",
      supportedUrls: {},
      doGenerate: async (options) => {
        calls.push(options);
        return {
          content: [
            { type: "text", text: "old " },
            { type: "text", text: "answer" },
            { type: "tool-call", toolCallId: "c1", toolName: "echo", input: '{"a":1}' },
            { type: "tool-call", toolCallId: "c2", toolName: "echo", input: "not json" },
          ],
          finishReason: "tool-calls",
          usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15, cachedInputTokens: 8 },
          warnings: [],
        };
      },
      doStream: async () => {
        throw new Error("not streamed here");
      },
    };
    const answer = await aiSdkClient(v2, { maxOutputTokens: 9 }).complete({
      ...request,
      tools: [{ name: "echo", description: "Echoes.", inputSchema: { type: "object" } }],
    });
    expect(answer).toEqual({
      content: "old answer",
      toolCalls: [
        { id: "c1", name: "echo", input: { a: 1 } },
        { id: "c2", name: "echo", input: "not json" },
      ],
      usage: { inputTokens: 12, outputTokens: 3, cacheReadTokens: 8 },
      // A v2 finish reason is a plain string (the unified one); telemetry takes it as it is.
      finishReason: "tool-calls",
    });
    expect(calls[0]?.prompt[0]).toEqual({ role: "system", content: "You are careful." });
    expect(calls[0]?.maxOutputTokens).toBe(9);
    expect(calls[0]?.tools).toEqual([
      { type: "function", name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
    ]);
  });
});

describe("dependencies", () => {
  test("the_ai_sdk_itself_is_a_dependency_with_its_zod_peer", async () => {
    const { readFile } = await import("node:fs/promises");
    // The client streams through `ai`'s streamText; `ai` declares zod as a peer, so it is ours to bring.
    const dir = new URL(".", import.meta.url);
    const manifest = JSON.parse(await readFile(new URL("../package.json", dir), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      "@ai-sdk/provider",
      "@insomnia/errors",
      "@insomnia/worker",
      // Types only: the package's .d.ts reach json-schema through @ai-sdk/provider.
      "@types/json-schema",
      "ai",
      "zod",
    ]);
  });
});
