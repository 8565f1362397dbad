import type { LanguageModelV3 } from "@ai-sdk/provider";
import { imagePart, INTERRUPTED_RESULT, Worker } from "@insomnia/worker";
import type { Message, TurnEvent } from "@insomnia/worker";
import { afterEach, describe, expect, test } from "vitest";
import { aiSdkClient } from "./ai-sdk-client.ts";
import type { AiSdkClientOptions } from "./ai-sdk-client.ts";
import { createAnthropic, createOpenAI } from "./__fixtures__/models.ts";
import { startFakeProvider } from "./fake-provider.ts";
import type { FakeProvider, FakeScript, FakeWire } from "./fake-provider.ts";

let provider: FakeProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

function modelFor(wire: FakeWire, baseURL: string): LanguageModelV3 {
  if (wire === "anthropic") return createAnthropic({ baseURL, apiKey: "k" })("claude-sonnet-4-5");
  const openai = createOpenAI({ baseURL, apiKey: "k" });
  return wire === "openai-chat" ? openai.chat("gpt-5") : openai.responses("gpt-5");
}

async function setup(wire: FakeWire, script: FakeScript, options: AiSdkClientOptions = {}) {
  provider = await startFakeProvider(script);
  const worker = new Worker({ client: aiSdkClient(modelFor(wire, provider.baseURL), options) });
  worker.setSystemPrompt("You are terse.");
  return { worker, fake: provider };
}

/** A promise settled by hand: the provider's pause, or "an event arrived". */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const messagesOf = (fake: FakeProvider, index: number): unknown =>
  (fake.requests[index]!.json as { messages?: unknown; input?: unknown }).messages ??
  (fake.requests[index]!.json as { input?: unknown }).input;

describe.each(["anthropic", "openai-chat", "openai-responses"] as const)("streaming over %s", (wire) => {
  test("deltas_reach_onEvent_while_the_provider_is_still_paused_mid_answer", async () => {
    const pause = gate();
    const firstDelta = gate<string>();
    const { worker, fake } = await setup(wire, () => ({ pieces: ["Hel", "lo ", "world"], hold: pause.promise }));
    const deltas: string[] = [];
    const run = worker.run("hi", {
      onEvent: (event) => {
        if (event.type !== "text-delta") return;
        deltas.push(event.text);
        firstDelta.open(event.text);
      },
    });
    // The provider has sent one piece and waits: the piece is already here.
    expect(await firstDelta.promise).toBe("Hel");
    expect(deltas).toEqual(["Hel"]);
    pause.open();
    const result = await run;
    expect(deltas).toEqual(["Hel", "lo ", "world"]);
    expect(result.final).toBe("Hello world");
    expect(worker.getHistory().at(-1)).toMatchObject({ role: "assistant", content: "Hello world" });
    expect(fake.requests[0]!.stream).toBe(true);
  });

  test("abort_mid_text_keeps_the_partial_answer_and_the_next_turn_sends_it", async () => {
    const controller = new AbortController();
    const { worker, fake } = await setup(wire, (_request, index) =>
      index === 0 ? { pieces: ["The answer ", "is 42"], hold: new Promise(() => undefined) } : { text: "ok" },
    );
    const run = worker.run("q", {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "text-delta") controller.abort(new Error("the client disconnected"));
      },
    });
    await expect(run).rejects.toMatchObject({ code: "ABORTED" });
    expect(worker.getHistory()).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "The answer ", interrupted: true },
    ]);
    await worker.run("next");
    const sent = messagesOf(fake, 1);
    if (wire === "anthropic") {
      expect(sent).toEqual([
        { role: "user", content: [{ type: "text", text: "q" }] },
        { role: "assistant", content: [{ type: "text", text: "The answer " }] },
        { role: "user", content: [{ type: "text", text: "next", cache_control: { type: "ephemeral" } }] },
      ]);
    } else if (wire === "openai-chat") {
      expect(sent).toEqual([
        { role: "developer", content: "You are terse." },
        { role: "user", content: "q" },
        { role: "assistant", content: "The answer " },
        { role: "user", content: "next" },
      ]);
    } else {
      expect(sent).toEqual([
        { role: "developer", content: "You are terse." },
        { role: "user", content: [{ type: "input_text", text: "q" }] },
        { role: "assistant", content: [{ type: "output_text", text: "The answer " }] },
        { role: "user", content: [{ type: "input_text", text: "next" }] },
      ]);
    }
  });
});

describe("abort", () => {
  test("abort_mid_tool_stops_the_tool_and_the_next_request_carries_an_interrupted_result", async () => {
    const controller = new AbortController();
    const started = gate();
    const { worker, fake } = await setup("anthropic", (_request, index) =>
      index === 0 ? { toolCalls: [{ id: "toolu_1", name: "wait", input: {} }] } : { text: "ok" },
    );
    let stopped = false;
    worker.tools.register({
      name: "wait",
      description: "waits",
      inputSchema: { type: "object" },
      execute: (_input, { signal }) =>
        new Promise((_, reject) => {
          started.open();
          signal.addEventListener("abort", () => {
            stopped = true;
            reject(signal.reason);
          });
        }),
    });
    const run = worker.run("q", { signal: controller.signal });
    await started.promise;
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: "ABORTED" });
    expect(stopped).toBe(true);
    await worker.run("next");
    expect((messagesOf(fake, 1) as unknown[]).slice(1)).toEqual([
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "wait", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: INTERRUPTED_RESULT, is_error: true },
          { type: "text", text: "next", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  });

  test("abort_during_a_retry_backoff_stops_the_wait_and_the_next_turn_sends_both_messages", async () => {
    const controller = new AbortController();
    const events: TurnEvent[] = [];
    const { worker, fake } = await setup(
      "anthropic",
      (_request, index) =>
        index === 0 ? { status: 503, body: '{"type":"error","error":{"message":"busy"}}' } : { text: "ok" },
      {
        // Waits until aborted, like the timer would for 2 s.
        retryDelay: (_ms, signal) =>
          new Promise((_, reject) => {
            if (signal?.aborted === true) reject(signal.reason);
            signal?.addEventListener("abort", () => reject(signal.reason));
          }),
      },
    );
    const run = worker.run("q", {
      signal: controller.signal,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "retry") controller.abort("stop");
      },
    });
    await expect(run).rejects.toMatchObject({ code: "ABORTED" });
    expect(events).toEqual([
      { type: "model-call", iteration: 1 },
      { type: "retry", attempt: 1, delayMs: 2000, code: "PROVIDER_UNAVAILABLE" },
    ]);
    expect(fake.requests).toHaveLength(1);
    await worker.run("next");
    expect(messagesOf(fake, 1)).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "q" },
          { type: "text", text: "next", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  });
});

describe("reasoning", () => {
  const thinking = { text: "Check the file first.", signature: "EqQBCkgIARABGAIiQ+sig/==" };

  test("the_thinking_block_and_its_signature_go_back_exactly_in_the_tool_loop_and_after_a_restore", async () => {
    const { worker, fake } = await setup(
      "anthropic",
      (_request, index) =>
        index === 0
          ? { reasoning: thinking, toolCalls: [{ id: "toolu_1", name: "echo", input: { a: 1 } }] }
          : { text: "done" },
      { reasoning: { effort: "low" } },
    );
    worker.tools.register({
      name: "echo",
      description: "echo",
      inputSchema: { type: "object" },
      execute: (input) => JSON.stringify(input),
    });
    const reasoningDeltas: string[] = [];
    await worker.run("go", {
      onEvent: (event) => {
        if (event.type === "reasoning-delta") reasoningDeltas.push(event.text);
      },
    });
    expect(reasoningDeltas.join("")).toBe(thinking.text);
    expect((fake.requests[0]!.json as { thinking?: unknown }).thinking).toEqual({
      type: "enabled",
      budget_tokens: 2048,
    });
    const block = `{"type":"thinking","thinking":${JSON.stringify(thinking.text)},"signature":${JSON.stringify(thinking.signature)}}`;
    expect(fake.requests[1]!.body).toContain(block);
    // A restore: the history as the log holds it (JSON), into a new worker and client.
    const stored = JSON.parse(JSON.stringify(worker.getHistory())) as Message[];
    const again = new Worker({
      client: aiSdkClient(modelFor("anthropic", fake.baseURL), { reasoning: { effort: "low" } }),
    });
    again.setSystemPrompt("You are terse.");
    again.setHistory(stored);
    await again.run("more");
    expect(fake.requests[2]!.body).toContain(block);
  });

  test("redacted_thinking_goes_back_as_received_and_another_provider_kind_never_sees_reasoning", async () => {
    const { worker, fake } = await setup("anthropic", (_request, index) =>
      index === 0 ? { reasoning: { redacted: "opaque-bytes+/=" }, text: "hm" } : { text: "ok" },
    );
    await worker.run("a");
    await worker.run("b");
    expect(fake.requests[1]!.body).toContain('{"type":"redacted_thinking","data":"opaque-bytes+/="}');
    expect(worker.getHistory()[1]).toMatchObject({
      reasoning: [{ text: "", provider: "anthropic", data: { anthropic: { redactedData: "opaque-bytes+/=" } } }],
    });
    const other = new Worker({ client: aiSdkClient(modelFor("openai-chat", fake.baseURL)) });
    other.setSystemPrompt("You are terse.");
    other.setHistory(worker.getHistory());
    await other.run("c");
    expect(fake.requests[2]!.body).not.toContain("opaque-bytes");
    expect(other.getHistory()[1]).toMatchObject({ reasoning: [{ provider: "anthropic" }] });
  });

  test("an_openai_reasoning_item_with_encrypted_content_goes_back_to_the_responses_api", async () => {
    const { worker, fake } = await setup(
      "openai-responses",
      (_request, index) =>
        index === 0
          ? { reasoning: { id: "rs_abc", encrypted: "gAAAA-enc==", text: "thinking" }, text: "hi" }
          : { text: "ok" },
      { reasoning: { effort: "medium" } },
    );
    await worker.run("a");
    expect(fake.requests[0]!.json).toMatchObject({
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      store: false,
    });
    await worker.run("b");
    expect(fake.requests[1]!.body).toContain('"encrypted_content":"gAAAA-enc=="');
    expect(fake.requests[1]!.body).toContain('"id":"rs_abc"');
  });
});

describe("images", () => {
  test("a_user_image_is_in_the_request_bytes_in_every_later_request", async () => {
    const png = imagePart(Buffer.from("89504e470d0a1a0a00000000", "hex"));
    if (typeof png === "string") throw new Error(png);
    const { worker, fake } = await setup("anthropic", () => ({ text: "a cat" }));
    await worker.run({ text: "what is this?", images: [png] });
    await worker.run("sure?");
    const block = `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"${png.data}"}`;
    expect(fake.requests[0]!.body).toContain(block);
    expect(fake.requests[1]!.body).toContain(block);
  });

  test("an_image_a_tool_returns_is_sent_with_its_result", async () => {
    const png = imagePart(Buffer.from("89504e470d0a1a0a00000001", "hex"));
    if (typeof png === "string") throw new Error(png);
    const { worker, fake } = await setup("anthropic", (_request, index) =>
      index === 0 ? { toolCalls: [{ id: "toolu_1", name: "screenshot", input: {} }] } : { text: "I see it" },
    );
    worker.tools.register({
      name: "screenshot",
      description: "takes a screenshot",
      inputSchema: { type: "object" },
      execute: () => ({ content: "the screen", images: [png] }),
    });
    await worker.run("look");
    expect(worker.getHistory()[2]).toEqual({
      role: "tool",
      toolCallId: "toolu_1",
      name: "screenshot",
      content: "the screen",
      images: [png],
    });
    expect(fake.requests[1]!.body).toContain(
      `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"${png.data}"}}`,
    );
  });
});
