import type { LlmRequest } from "@insomnia/worker";
import { afterEach, describe, expect, test } from "vitest";
import { aiSdkClient } from "./ai-sdk-client.ts";
import { isContextOverflow, saysContextOverflow } from "./context-overflow.ts";
import { createAnthropic, createOpenAI } from "./__fixtures__/models.ts";
import { rejection } from "./__fixtures__/rejection.ts";
import { startFakeProvider } from "./fake-provider.ts";
import type { FakeProvider, FakeReply } from "./fake-provider.ts";

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function serve(reply: FakeReply): Promise<FakeProvider> {
  fake = await startFakeProvider(() => reply);
  return fake;
}

const request: LlmRequest = { systemPrompt: "S", messages: [{ role: "user", content: "hi" }], tools: [] };
const json = (status: number, body: unknown): FakeReply => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
const OPENAI_BODY = {
  error: {
    message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
    type: "invalid_request_error",
    param: "input",
    code: "context_length_exceeded",
  },
};

describe("CONTEXT_OVERFLOW: each provider's own way of saying the prompt is too long", () => {
  test("anthropic_prompt_is_too_long_is_context_overflow_and_not_retried", async () => {
    const server = await serve(
      json(400, {
        type: "error",
        error: { type: "invalid_request_error", message: "prompt is too long: 208310 tokens > 200000 maximum" },
      }),
    );
    const model = createAnthropic({ baseURL: server.baseURL, apiKey: "k" })("claude-sonnet-4-5");
    const failure = await rejection(aiSdkClient(model).complete(request, { onEvent: () => undefined }));
    expect([failure.code, failure.status]).toEqual(["CONTEXT_OVERFLOW", 400]);
    expect(failure.message).toContain("prompt is too long: 208310 tokens > 200000 maximum");
    expect(server.requests).toHaveLength(1);
  });

  test("openai_chat_completions_context_length_exceeded_is_context_overflow", async () => {
    const server = await serve(
      json(400, {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      }),
    );
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" }).chat("gpt-4o");
    const failure = await rejection(aiSdkClient(model).complete(request));
    expect(failure.code).toBe("CONTEXT_OVERFLOW");
    expect(server.requests[0]!.wire).toBe("openai-chat");
  });

  test("openai_responses_in_a_400_body_and_in_a_streamed_response_failed_event", async () => {
    const server = await serve(json(400, OPENAI_BODY));
    const model = createOpenAI({ baseURL: server.baseURL, apiKey: "k" })("gpt-5");
    expect((await rejection(aiSdkClient(model).complete(request))).code).toBe("CONTEXT_OVERFLOW");
    await server.close();

    const failed = {
      type: "response.failed",
      sequence_number: 1,
      response: { error: { code: "context_length_exceeded", message: OPENAI_BODY.error.message } },
    };
    const streamed = await serve({
      status: 200,
      headers: { "content-type": "text/event-stream" },
      body: `event: response.failed\ndata: ${JSON.stringify(failed)}\n\n`,
    });
    const streaming = createOpenAI({ baseURL: streamed.baseURL, apiKey: "k" })("gpt-5");
    const failure = await rejection(aiSdkClient(streaming).complete(request, { onEvent: () => undefined }));
    expect(failure.code).toBe("CONTEXT_OVERFLOW");
    expect(streamed.requests[0]!.wire).toBe("openai-responses");
  });

  test("another_400_stays_request_rejected", async () => {
    const server = await serve(
      json(400, { type: "error", error: { type: "invalid_request_error", message: "model: not found" } }),
    );
    const model = createAnthropic({ baseURL: server.baseURL, apiKey: "k" })("claude-nope");
    expect((await rejection(aiSdkClient(model).complete(request))).code).toBe("REQUEST_REJECTED");
  });

  test("the_shapes_are_recognised_and_nothing_else_is", () => {
    expect(saysContextOverflow({ type: "error", code: "context_length_exceeded", message: "x" })).toBe(true);
    expect(
      saysContextOverflow({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "input length and `max_tokens` exceed context limit: 1 + 2 > 3",
        },
      }),
    ).toBe(true);
    expect(saysContextOverflow({ error: { type: "invalid_request_error", message: "max_tokens: too large" } })).toBe(
      false,
    );
    expect(saysContextOverflow({ error: { type: "overloaded_error", message: "prompt is too long" } })).toBe(false);
    expect(saysContextOverflow("prompt is too long")).toBe(false);
    expect(isContextOverflow(new Error("prompt is too long"))).toBe(false);
  });
});
