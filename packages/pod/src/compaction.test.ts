import { MemorySegmentStore } from "@insomnia/segment-store";
import type { LlmRequest, LlmResponse, Message } from "@insomnia/worker";
import { Worker } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, describe, expect, test } from "vitest";
import { makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import {
  compactionRequest,
  estimateSegmentTokens,
  estimateTokens,
  reachedThreshold,
  splitForCompaction,
  usedTokens,
  withoutOldToolOutputs,
} from "./compaction.ts";
import { contextWindowOf, shippedContextWindow } from "./context-window.ts";
import { Pod } from "./pod.ts";
import { collectWarnings } from "./pod-warning.ts";
import { summaryMessage } from "./summary-message.ts";

const user = (content: string): Message => ({ role: "user", content });
const answer = (content: string): Message => ({ role: "assistant", content });
const call: Message = { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read_file", input: {} }] };
const result: Message = { role: "tool", toolCallId: "c1", name: "read_file", content: "file text" };

describe("compaction pieces", () => {
  test("used_tokens_counts_the_whole_input_and_the_output", () => {
    expect(usedTokens({ inputTokens: 9040, cacheReadTokens: 9000, outputTokens: 30 })).toBe(9070);
    expect(usedTokens({ cacheReadTokens: 100, cacheWriteTokens: 50, outputTokens: 1 })).toBe(151);
    expect(usedTokens(undefined)).toBeUndefined();
  });

  test("the_threshold_is_reached_at_exactly_at_times_window_never_clamped", () => {
    const settings = { window: 10_000, at: 0.5, instruction: "", instructionRef: "$insomnia/compact" };
    expect(reachedThreshold({ inputTokens: 4999 }, settings)).toBe(false);
    expect(reachedThreshold({ inputTokens: 5000 }, settings)).toBe(true);
    expect(reachedThreshold({ inputTokens: 9499 }, { ...settings, at: 0.95 })).toBe(false);
    expect(reachedThreshold({ inputTokens: 9500 }, { ...settings, at: 0.95 })).toBe(true);
    expect(reachedThreshold({ inputTokens: 10 ** 9 }, { ...settings, window: undefined })).toBe(false);
    expect(reachedThreshold(undefined, settings)).toBe(false);
  });

  test("a_new_turn_keeps_its_message_a_tool_loop_keeps_the_pair_and_a_finished_turn_keeps_nothing", () => {
    const done = [user("one"), answer("a1")];
    expect(splitForCompaction([...done, user("two")])).toEqual({ summarized: done, kept: [user("two")] });
    const loop = [...done, user("two"), call, result];
    expect(splitForCompaction(loop)).toEqual({ summarized: loop, kept: [user("two"), call, result] });
    expect(splitForCompaction(done)).toEqual({ summarized: done, kept: [] });
    // After an earlier compaction the summary is not the turn's message.
    const compacted = [summaryMessage("s"), call, result];
    expect(splitForCompaction(compacted).kept).toEqual([call, result]);
    // Right after a compaction there is nothing to keep but a new summary.
    expect(splitForCompaction([summaryMessage("s")])).toEqual({ summarized: [summaryMessage("s")], kept: [] });
    // A call whose results never came is kept whole with its turn's message.
    expect(splitForCompaction([...done, user("two"), call]).kept).toEqual([user("two"), call]);
  });

  test("the_request_is_the_history_as_sent_then_the_instruction", () => {
    const base = { systemPrompt: "S", tools: [{ name: "t", description: "d", inputSchema: {} }] };
    const request = compactionRequest(base, [user("one"), answer("a1")], "SUMMARIZE");
    expect(request).toEqual({ ...base, messages: [user("one"), answer("a1"), user("SUMMARIZE")] });
  });

  test("old_tool_outputs_give_way_to_a_visible_placeholder_and_the_last_calls_stay", () => {
    const old = [user("one"), call, result, answer("a1"), user("two"), call, { ...result, content: "newest" }];
    const lighter = withoutOldToolOutputs(old)!;
    expect(lighter[2]).toMatchObject({
      role: "tool",
      content: "[output of read_file left out of the compaction request to fit the context window: 9 characters]",
    });
    expect(lighter[6]).toMatchObject({ content: "newest" });
    expect(withoutOldToolOutputs([user("one"), answer("a1")])).toBeUndefined();
  });

  test("the_estimate_counts_prompt_tools_summary_and_kept_messages_locally", () => {
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("é".repeat(4))).toBe(2);
    const base = { systemPrompt: "x".repeat(400), tools: [] };
    expect(estimateSegmentTokens(base, "y".repeat(4000), [])).toBeGreaterThan(1100);
    expect(estimateSegmentTokens(base, "", [user("z".repeat(400))])).toBeGreaterThan(200);
  });

  test("the_shipped_window_table_and_the_manifest_override", () => {
    expect(shippedContextWindow("claude-sonnet-4-5-20250929")).toBe(200_000);
    expect(shippedContextWindow("claude-opus-4-7")).toBe(1_000_000);
    expect(shippedContextWindow("gpt-5")).toBe(272_000);
    expect(shippedContextWindow("my-local-model")).toBeUndefined();
    expect(contextWindowOf({ model: "claude-sonnet-4-5", context_window: 50_000 })).toBe(50_000);
    expect(contextWindowOf({ model: "my-local-model" })).toBeUndefined();
    expect(contextWindowOf(undefined)).toBeUndefined();
  });
});

describe("Pod.compact", () => {
  const dirs: PodDir[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await dir.cleanup();
  });

  async function started(script: (request: LlmRequest, index: number) => LlmResponse) {
    const dir = await makePodDir("You are a test pod.\n");
    dirs.push(dir);
    const client = new ScriptedLlmClient(script);
    const worker = new Worker({ client });
    worker.tools.register(echoTool("read_file"));
    const store = new MemorySegmentStore();
    const notifier = collectWarnings();
    const manifest = { ...dir.manifest, provider: { kind: "anthropic", model: "m", context_window: 1000 } };
    const pod = await Pod.fromManifest(manifest, { worker, store, notifier, env: dir.env });
    return { pod, worker, client, store, notifier };
  }

  test("the_model_writes_the_summary_from_the_history_and_the_new_segment_keeps_the_prompt", async () => {
    const { pod, worker, client, store } = await started((request) =>
      request.messages.at(-1)?.content.startsWith("The conversation is about to be compacted")
        ? { content: "the summary", usage: { inputTokens: 30, outputTokens: 3 } }
        : { content: "a1", usage: { inputTokens: 20 } },
    );
    await pod.run("one");
    const first = pod.segmentId!;
    const report = await pod.compact();
    expect(report).toMatchObject({ reason: "manual", outcome: "applied", previousSegment: first });
    expect(report.segmentId).not.toBe(first);
    const sent = client.requests[1]!;
    expect(sent.systemPrompt).toBe(client.requests[0]!.systemPrompt);
    expect(sent.tools).toEqual(client.requests[0]!.tools);
    expect(sent.messages.slice(0, 2)).toEqual([
      user("one"),
      { role: "assistant", content: "a1", usage: { inputTokens: 20 } },
    ]);
    expect(worker.getHistory()).toEqual([summaryMessage("the summary")]);
    // The summary call is in the old segment, marked, and left out of a restore's history.
    const old = await store.readSegment(first);
    expect(old.records.at(-1)).toMatchObject({
      type: "message",
      version: 3,
      compaction: { reason: "manual", outcome: "applied", instruction: "$insomnia/compact" },
      message: { role: "assistant", content: "the summary" },
    });
    await pod.close();
    const again = new Worker({ client: new ScriptedLlmClient([]) });
    const restored = await Pod.restore(store, first, again);
    expect(again.getHistory().map((m) => m.content)).toEqual(["one", "a1"]);
    await restored.close();
  });

  test("an_ineffective_summary_is_refused_with_its_code_and_the_caller_summarizer_still_works", async () => {
    const { pod, worker, notifier } = await started((request) =>
      request.messages.length > 2 ? { content: "w".repeat(8000) } : { content: "a1" },
    );
    await pod.run("one");
    await expect(pod.compact()).rejects.toMatchObject({ code: "COMPACTION_INEFFECTIVE" });
    expect(notifier.warnings.map((w) => w.code)).toEqual(["COMPACTION_INEFFECTIVE"]);
    expect(worker.getHistory().map((m) => m.content)).toEqual(["one", "a1"]);
    const report = await pod.compact(() => "mine");
    expect(report.outcome).toBe("applied");
    expect(worker.getHistory()).toEqual([summaryMessage("mine")]);
  });
});

describe("the ledger and a compaction's summary call", () => {
  const callOf = (messages: string[], sentAt = "2026-01-01T00:00:00.000Z") => ({
    sentAt,
    system: "s",
    tools: "t",
    messages,
  });
  test("the_summary_call_is_counted_and_the_next_call_is_judged_against_the_call_before_it", async () => {
    const { conversationLedger, usageTotals } = await import("./ledger.ts");
    const records = [
      { type: "segment_start" },
      { type: "message", message: user("one") },
      {
        type: "message",
        message: { role: "assistant", content: "a1", usage: { inputTokens: 5000, cacheWriteTokens: 5000 } },
        call: callOf(["h1"]),
      },
      {
        type: "message",
        version: 3,
        message: {
          role: "assistant",
          content: "too long",
          usage: { inputTokens: 5100, cacheReadTokens: 5000, cacheWriteTokens: 100 },
        },
        call: callOf(["h1", "h2", "instruction"]),
        compaction: { reason: "threshold", outcome: "ineffective", instruction: "$insomnia/compact" },
      },
      { type: "message", message: user("two") },
      {
        type: "message",
        message: { role: "assistant", content: "a2", usage: { inputTokens: 5200, cacheReadTokens: 5000 } },
        call: callOf(["h1", "h2", "h3"]),
      },
    ];
    const calls = conversationLedger([{ id: "seg-1", records }], { model: "claude-sonnet-4-5" });
    expect(calls.map((c) => c.cacheBreak)).toEqual([{ cause: "first-request" }, undefined, undefined]);
    expect(usageTotals(calls)).toMatchObject({ calls: 3, inputTokens: 15_300, cacheReadTokens: 10_000 });
  });
});
