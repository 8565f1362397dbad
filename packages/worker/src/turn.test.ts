import { describe, expect, test } from "vitest";
import { caught, deferred } from "./__fixtures__/async.ts";
import { imagePart } from "./content-parts.ts";
import type { LlmCallOptions } from "./llm-client.ts";
import { ScriptedLlmClient } from "./scripted-llm-client.ts";
import { echoTool } from "./test-tools.ts";
import type { TurnEvent } from "./turn.ts";
import { CONTINUE_PROMPT, INTERRUPTED_RESULT } from "./turn.ts";
import { Worker } from "./worker.ts";

const PROMPT = "You are a careful agent.";

function setup(script: ConstructorParameters<typeof ScriptedLlmClient>[0]) {
  const client = new ScriptedLlmClient(script);
  const worker = new Worker({ client });
  worker.setSystemPrompt(PROMPT);
  return { client, worker };
}

/** Rejects when the call's signal aborts, as a real client does. */
function untilAborted(options: LlmCallOptions): Promise<never> {
  return new Promise((_, reject) => {
    if (options.signal?.aborted === true) reject(options.signal.reason);
    options.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true });
  });
}

describe("turn events", () => {
  test("streamed_deltas_arrive_in_order_and_join_to_the_logged_text", async () => {
    const { worker } = setup(async (_request, index, options) => {
      if (index === 0) {
        options.onEvent?.({ type: "reasoning-delta", text: "think" });
        options.onEvent?.({ type: "text-delta", text: "Let " });
        options.onEvent?.({ type: "text-delta", text: "me look." });
        return {
          content: "Let me look.",
          toolCalls: [{ id: "c1", name: "echo", input: { a: 1 } }],
          usage: { inputTokens: 10, outputTokens: 3 },
        };
      }
      options.onEvent?.({ type: "retry", attempt: 1, delayMs: 2000, code: "RATE_LIMITED" });
      options.onEvent?.({ type: "text-delta", text: "Done" });
      return { content: "Done" };
    });
    worker.tools.register(echoTool("echo"));
    const events: TurnEvent[] = [];
    const result = await worker.run("go", { onEvent: (event) => events.push(event) });
    expect(events).toEqual([
      { type: "model-call", iteration: 1 },
      { type: "reasoning-delta", text: "think" },
      { type: "text-delta", text: "Let " },
      { type: "text-delta", text: "me look." },
      { type: "usage", usage: { inputTokens: 10, outputTokens: 3 } },
      { type: "tool-call", id: "c1", name: "echo", input: { a: 1 } },
      { type: "tool-result", id: "c1", name: "echo", isError: false },
      { type: "model-call", iteration: 2 },
      { type: "retry", attempt: 1, delayMs: 2000, code: "RATE_LIMITED" },
      { type: "text-delta", text: "Done" },
    ]);
    expect(result.final).toBe("Done");
  });

  test("a_client_that_only_completes_gives_its_whole_text_as_one_delta", async () => {
    const { worker } = setup([{ content: "whole answer" }]);
    const events: TurnEvent[] = [];
    await worker.run("hi", { onEvent: (event) => events.push(event) });
    expect(events).toEqual([
      { type: "model-call", iteration: 1 },
      { type: "text-delta", text: "whole answer" },
    ]);
  });

  test("deltas_that_do_not_join_to_the_content_are_a_client_failure", async () => {
    const { worker } = setup(async (_request, _index, options) => {
      options.onEvent?.({ type: "text-delta", text: "abc" });
      return { content: "abd" };
    });
    expect((await caught(worker.run("x"))).code).toBe("CLIENT_FAILED");
    expect(worker.getHistory()).toEqual([{ role: "user", content: "x" }]);
  });

  test("an_event_listener_that_throws_stops_the_turn_with_its_error_and_keeps_the_partial_text", async () => {
    const { worker } = setup(async (_request, _index, options) => {
      options.onEvent?.({ type: "text-delta", text: "part" });
      options.onEvent?.({ type: "text-delta", text: "more" });
      return untilAborted(options);
    });
    const boom = new Error("socket closed");
    let seen = 0;
    const failure = await worker
      .run("x", {
        onEvent: (event) => {
          if (event.type === "text-delta" && ++seen === 2) throw boom;
        },
      })
      .catch((error: unknown) => error);
    expect(failure).toBe(boom);
    expect(worker.getHistory().at(-1)).toEqual({ role: "assistant", content: "partmore", interrupted: true });
  });
});

describe("abort", () => {
  test("abort_mid_text_keeps_the_partial_answer_marked_interrupted_and_later_requests_carry_it", async () => {
    const controller = new AbortController();
    const { client, worker } = setup(async (_request, index, options) => {
      if (index === 0) {
        options.onEvent?.({ type: "text-delta", text: "The answer is" });
        controller.abort(new Error("user left")); // a custom reason is still an abort
        return untilAborted(options);
      }
      return { content: "ok" };
    });
    const error = await caught(worker.run("q", { signal: controller.signal }));
    expect(error.code).toBe("ABORTED");
    expect((error.cause as Error).message).toBe("user left");
    expect(worker.getHistory()).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "The answer is", interrupted: true },
    ]);
    await worker.run("next");
    expect(client.requests[1]!.messages).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "The answer is", interrupted: true },
      { role: "user", content: "next" },
    ]);
  });

  test("resume_after_an_interrupted_answer_asks_the_model_to_go_on", async () => {
    const controller = new AbortController();
    const { client, worker } = setup(async (_request, index, options) => {
      if (index === 0) {
        options.onEvent?.({ type: "text-delta", text: "half" });
        controller.abort();
        return untilAborted(options);
      }
      return { content: " and the rest" };
    });
    await caught(worker.run("q", { signal: controller.signal }));
    const result = await worker.resume();
    expect(client.requests[1]!.messages.slice(1)).toEqual([
      { role: "assistant", content: "half", interrupted: true },
      { role: "user", content: CONTINUE_PROMPT },
    ]);
    expect(result.final).toBe(" and the rest");
  });

  test("abort_mid_tool_gives_the_running_tool_the_signal_and_every_unanswered_call_an_interrupted_result", async () => {
    const controller = new AbortController();
    const started = deferred();
    let toolSignal: AbortSignal | undefined;
    const { client, worker } = setup([
      {
        content: "",
        toolCalls: [
          { id: "c1", name: "slow", input: {} },
          { id: "c2", name: "slow", input: {} },
        ],
      },
      { content: "fine" },
    ]);
    worker.tools.register({
      name: "slow",
      description: "waits until aborted",
      inputSchema: { type: "object" },
      execute: (_input, { signal }) => {
        toolSignal = signal;
        started.resolve();
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      },
    });
    const run = worker.run("q", { signal: controller.signal });
    await started.promise;
    controller.abort("stop");
    expect((await caught(run)).code).toBe("ABORTED");
    expect(toolSignal?.aborted).toBe(true);
    const tail = worker.getHistory().slice(2);
    expect(tail).toEqual([
      { role: "tool", toolCallId: "c1", name: "slow", content: INTERRUPTED_RESULT, isError: true },
      { role: "tool", toolCallId: "c2", name: "slow", content: INTERRUPTED_RESULT, isError: true },
    ]);
    await worker.run("again");
    expect(client.requests[1]!.messages.slice(2)).toEqual([...tail, { role: "user", content: "again" }]);
  });

  test("an_aborted_signal_before_the_turn_sends_and_logs_nothing", async () => {
    const { client, worker } = setup([{ content: "never" }]);
    expect((await caught(worker.run("q", { signal: AbortSignal.abort() }))).code).toBe("ABORTED");
    expect(client.requests).toHaveLength(0);
    expect(worker.getHistory()).toEqual([]);
  });
});

describe("turnId", () => {
  test("a_finished_turn_is_returned_as_stored_without_a_model_call", async () => {
    const { client, worker } = setup([{ content: "first" }]);
    const first = await worker.run("q", { turnId: "t1" });
    const again = await worker.run("q", { turnId: "t1" });
    expect(client.requests).toHaveLength(1);
    expect(again.final).toBe("first");
    expect(again.messages).toEqual(first.messages);
    expect(worker.getHistory()).toHaveLength(2);
  });

  test("an_unfinished_turn_is_continued_without_sending_its_message_twice", async () => {
    const controller = new AbortController();
    const { client, worker } = setup(async (_request, index, options) => {
      if (index === 0) {
        controller.abort();
        return untilAborted(options);
      }
      return { content: "answer" };
    });
    await caught(worker.run("q", { turnId: "t1", signal: controller.signal }));
    const result = await worker.run("q", { turnId: "t1" });
    expect(result.final).toBe("answer");
    expect(client.requests[1]!.messages).toEqual([{ role: "user", content: "q", turnId: "t1" }]);
    expect(worker.getHistory().filter((m) => m.role === "user")).toHaveLength(1);
  });
});

describe("images", () => {
  test("images_of_a_run_are_kept_in_the_history_and_sent_in_later_requests", async () => {
    const png = imagePart(Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"));
    if (typeof png === "string") throw new Error(png);
    const { client, worker } = setup([{ content: "a" }, { content: "b" }]);
    await worker.run({ text: "look", images: [png] });
    await worker.run("and?");
    expect(client.requests[1]!.messages[0]).toEqual({ role: "user", content: "look", images: [png] });
    expect(imagePart(Buffer.from("GIF87a"))).toMatchObject({ mediaType: "image/gif" });
    expect(imagePart(Buffer.from("hello"))).toMatch(/not a png, jpeg, gif or webp/);
    expect(imagePart(Buffer.alloc(5 * 1024 * 1024 + 1, 0xff))).toMatch(/over the limit/);
  });
});
