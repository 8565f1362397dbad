import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LlmRequest } from "@insomnia/worker";
import { afterEach, describe, expect, test } from "vitest";
import { aiSdkClient } from "./ai-sdk-client.ts";
import { createAnthropic } from "./__fixtures__/models.ts";
import { rejection } from "./__fixtures__/rejection.ts";

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const START = sse("message_start", {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "m",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  },
});
const TEXT =
  sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  sse("content_block_delta", {
    type: "content_block_delta",
    index: 0,
    delta: { type: "text_delta", text: "Half an ans" },
  });

const request: LlmRequest = { systemPrompt: "S", messages: [{ role: "user", content: "hi" }], tools: [] };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server that starts a streamed Anthropic answer, then does `end` to it; counts requests. */
async function streaming(end: (socket: { write(s: string): void; destroy(): void; end(): void }) => void) {
  const seen = { requests: 0 };
  server = createServer((req, res) => {
    seen.requests++;
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(START + TEXT);
      setImmediate(() =>
        end({ write: (s) => res.write(s), destroy: () => req.socket.destroy(), end: () => res.end() }),
      );
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { seen, model: createAnthropic({ baseURL, apiKey: "k" })("claude-sonnet-4-5") };
}

describe("streamed answers that fail", () => {
  test("a_connection_that_breaks_off_mid_answer_is_provider_unavailable_and_not_retried", async () => {
    const { seen, model } = await streaming((socket) => socket.destroy());
    const pieces: string[] = [];
    const failure = await rejection(
      aiSdkClient(model, { onText: (t) => pieces.push(t), retryDelay: async () => undefined }).complete(request),
    );
    expect([failure.code, failure.attempts]).toEqual(["PROVIDER_UNAVAILABLE", 1]);
    expect(failure.detail).toMatch(/broke off its answer mid-stream/);
    expect(pieces.join("")).toBe("Half an ans");
    expect(seen.requests).toBe(1);
  });

  test("an_error_event_of_the_provider_mid_answer_is_provider_unavailable_with_its_words", async () => {
    const { seen, model } = await streaming((socket) => {
      socket.write(sse("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }));
      socket.end();
    });
    const failure = await rejection(aiSdkClient(model, { onText: () => undefined }).complete(request));
    expect(failure.code).toBe("PROVIDER_UNAVAILABLE");
    expect(failure.detail).toMatch(/\(Overloaded\)/);
    expect(seen.requests).toBe(1);
  });

  test("an_on_text_callback_that_throws_is_rethrown_as_it_is", async () => {
    const { model } = await streaming((socket) => socket.end());
    const bug = new RangeError("a bug in the caller");
    const thrown = await aiSdkClient(model, {
      onText: () => {
        throw bug;
      },
    })
      .complete(request)
      .catch((error: unknown) => error);
    expect(thrown).toBe(bug);
  });

  test("a_streamed_request_answered_with_json_is_malformed_response_and_not_retried", async () => {
    let requests = 0;
    server = createServer((req, res) => {
      requests++;
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const model = createAnthropic({ baseURL, apiKey: "k" })("claude-sonnet-4-5");
    const error = await rejection(aiSdkClient(model).complete(request, { onEvent: () => undefined }));
    expect([error.code, requests]).toEqual(["MALFORMED_RESPONSE", 1]);
    expect(error.message).toMatch(/application\/json, not server-sent events/);
  });
});

describe("streamed tool calls the model gets wrong", () => {
  test("an_unknown_tool_and_input_that_is_not_json_reach_the_worker_as_sent", async () => {
    const { model } = await streaming((socket) => {
      const block = (index: number, id: string, name: string, json: string): string =>
        sse("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id, name, input: {} },
        }) +
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: json },
        }) +
        sse("content_block_stop", { type: "content_block_stop", index });
      socket.write(
        sse("content_block_stop", { type: "content_block_stop", index: 0 }) +
          block(1, "c1", "no_such_tool", '{"a":1}') +
          block(2, "c2", "echo", "not json") +
          sse("message_delta", {
            type: "message_delta",
            delta: { stop_reason: "tool_use", stop_sequence: null },
            usage: { output_tokens: 3 },
          }) +
          sse("message_stop", { type: "message_stop" }),
      );
      socket.end();
    });
    const answer = await aiSdkClient(model).complete(
      { ...request, tools: [{ name: "echo", description: "Echoes.", inputSchema: { type: "object" } }] },
      { onEvent: () => undefined },
    );
    expect([answer.content, answer.toolCalls]).toEqual([
      "Half an ans",
      [
        { id: "c1", name: "no_such_tool", input: { a: 1 } },
        { id: "c2", name: "echo", input: "not json" },
      ],
    ]);
  });
});
