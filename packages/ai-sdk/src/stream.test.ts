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
});
