import type { PodManifest } from "@insomnia/manifest";
import { MemorySegmentStore } from "@insomnia/segment-store";
import { Worker } from "@insomnia/worker";
import type { LlmResponse, LlmUsage } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, describe, expect, test } from "vitest";
import { makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { cacheBreaks } from "./cache-break.ts";
import { callCost, priceOf } from "./call-cost.ts";
import { conversationLedger, type LedgerSegment, usageTotals } from "./ledger.ts";
import { Pod } from "./pod.ts";
import { minimumCacheablePrompt, shippedPrice } from "./price-table.ts";

const dirs: PodDir[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.cleanup();
});

/** A clock the test moves by hand. */
function handClock(iso = "2026-01-05T10:00:00.000Z") {
  let now = Date.parse(iso);
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

const usage = (
  inputTokens: number,
  cacheReadTokens: number,
  cacheWriteTokens: number,
  outputTokens: number,
): LlmUsage => ({
  inputTokens,
  cacheReadTokens,
  cacheWriteTokens,
  outputTokens,
});

/** Reads the pod's conversation (its segments, oldest first) back from the store. */
async function segmentsOf(store: MemorySegmentStore, latest: string): Promise<LedgerSegment[]> {
  const segments: LedgerSegment[] = [];
  for (let id: string | undefined = latest; id !== undefined; ) {
    const { records } = await store.readSegment(id);
    const start = records[0];
    if (start?.type !== "segment_start") break;
    segments.unshift({ id, previousSegment: start.previousSegment, records });
    id = start.previousSegment;
  }
  return segments;
}

interface Setup {
  provider?: PodManifest["provider"];
  answers: readonly LlmResponse[];
}

async function podWith({ provider, answers }: Setup) {
  const dir = await makePodDir("You are a pod.\n");
  dirs.push(dir);
  const manifest = (provider === undefined ? dir.manifest : { ...dir.manifest, provider }) as PodManifest;
  const client = new ScriptedLlmClient(answers);
  const worker = new Worker({ client });
  const store = new MemorySegmentStore();
  const clock = handClock();
  const pod = await Pod.fromManifest(manifest, { worker, store, callClock: clock, env: dir.env });
  const ledger = async (options = {}) => conversationLedger(await segmentsOf(store, pod.segmentId!), options);
  return { pod, worker, store, clock, ledger };
}

const SONNET = { kind: "anthropic", model: "claude-sonnet-4-5-20250929" } as const;

describe("the cost of a conversation", () => {
  // Three calls with caching, the third after a compaction; sonnet 4.5 at $3 in, $15 out, $3.75 write, $0.30 read.
  const answers: LlmResponse[] = [
    { content: "one", usage: usage(5000, 0, 4800, 100) },
    { content: "two", usage: usage(5300, 4800, 400, 200) },
    { content: "three", usage: usage(2000, 1500, 400, 50) },
  ];

  test("scripted_conversation_costs_what_the_price_table_says_to_the_cent", async () => {
    const { pod, ledger } = await podWith({ provider: SONNET, answers });
    await pod.run("first");
    await pod.run("second");
    await pod.compact(() => "we said one and two");
    await pod.run("third");
    await pod.close();

    const calls = await ledger({ model: SONNET.model });
    // 200 uncached × 3 + 4800 written × 3.75 + 100 out × 15, per million.
    expect(calls.map((c) => c.costUsd)).toEqual([
      expect.closeTo(0.0201, 12),
      expect.closeTo(0.00624, 12),
      expect.closeTo(0.003, 12),
    ]);
    // The cost is logged with each call, so the ledger also holds without a manifest.
    expect((await ledger()).map((c) => c.costUsd)).toEqual(calls.map((c) => c.costUsd));
    expect(calls.map((c) => c.cacheBreak?.cause)).toEqual(["first-request", undefined, "compaction"]);
    const totals = usageTotals(calls);
    expect(totals).toMatchObject({
      calls: 3,
      reported: 3,
      inputTokens: 12_300,
      outputTokens: 350,
      cacheReadTokens: 6300,
      cacheWriteTokens: 5600,
      unpricedCalls: 0,
    });
    expect(totals.costUsd).toBeCloseTo(0.02934, 12);
    expect(Math.round(totals.costUsd! * 100) / 100).toBe(0.03);
  });

  test("provider_pricing_overrides_the_table_for_every_call", async () => {
    const pricing = { input: 1, output: 2, cache_read: 0.1, cache_write: 1.5 };
    const { pod, ledger } = await podWith({ provider: { ...SONNET, pricing }, answers });
    await pod.run("first");
    await pod.run("second");
    await pod.compact(() => "summary");
    await pod.run("third");
    await pod.close();
    const calls = await ledger();
    // call 1: 200×1 + 4800×1.5 + 100×2 = 7,600 µ$; call 2: 100 + 480 + 600 + 400; call 3: 100 + 150 + 600 + 100.
    expect(calls.map((c) => c.costUsd)).toEqual([
      expect.closeTo(0.0076, 12),
      expect.closeTo(0.00158, 12),
      expect.closeTo(0.00095, 12),
    ]);
    expect(usageTotals(calls).costUsd).toBeCloseTo(0.01013, 12);
  });

  test("an_unknown_price_is_unknown_never_zero", async () => {
    const { pod, ledger } = await podWith({
      provider: { kind: "openai-compatible", model: "llama-3.3-local" },
      answers: [{ content: "a", usage: usage(100, 0, 0, 10) }, { content: "b" }],
    });
    await pod.run("first");
    await pod.run("second");
    await pod.close();
    const calls = await ledger();
    expect(calls.map((c) => c.costUsd)).toEqual([undefined, undefined]);
    const totals = usageTotals(calls);
    expect(totals.costUsd).toBeUndefined();
    expect(totals).toMatchObject({ knownCostUsd: 0, unpricedCalls: 2, reported: 1 });
    // A price the override leaves out is unknown too, but only where tokens were spent at it.
    const partial = priceOf("x", { input: 1, output: 1 });
    expect(callCost(usage(100, 0, 0, 10), partial)).toBeCloseTo(0.00011, 12);
    expect(callCost(usage(100, 50, 0, 10), partial)).toBeUndefined();
  });

  test("the_table_knows_snapshots_by_their_base_id_and_nothing_by_a_near_name", () => {
    expect(shippedPrice("claude-haiku-4-5-20251001")).toMatchObject({ input: 1, output: 5, cacheWrite1h: 2 });
    expect(shippedPrice("gpt-4.1-mini-2025-04-14")).toMatchObject({ input: 0.4, cacheRead: 0.1 });
    expect(shippedPrice("claude-opus-4-9")).toBeUndefined();
    expect(shippedPrice("gpt-4.1-turbo")).toBeUndefined();
    expect(minimumCacheablePrompt("claude-opus-4-5-20251101")).toBe(4096);
    expect(minimumCacheablePrompt("gpt-5-mini")).toBe(1024);
    expect(minimumCacheablePrompt("llama-3.3")).toBeUndefined();
    // Over 200K input tokens Sonnet 4.5 bills long-context rates the table does not carry: unknown.
    expect(callCost(usage(200_000, 0, 0, 1), shippedPrice("claude-sonnet-4-5"))).toBeCloseTo(0.600015, 12);
    expect(callCost(usage(200_001, 0, 0, 1), shippedPrice("claude-sonnet-4-5"))).toBeUndefined();
    // GPT-5.4 likewise over 272K: 272,000 input at $2.50/M and 1 output at $15/M, then unknown.
    expect(callCost(usage(272_000, 0, 0, 1), shippedPrice("gpt-5.4-2026-03-05"))).toBeCloseTo(0.680015, 12);
    expect(callCost(usage(272_001, 0, 0, 1), shippedPrice("gpt-5.4"))).toBeUndefined();
    // A 1-hour write is priced at the 1-hour rate.
    expect(callCost(usage(1000, 0, 1000, 0), shippedPrice("claude-sonnet-4-5"), "1h")).toBeCloseTo(0.006, 12);
  });
});

describe("cache-break causes, each produced on purpose", () => {
  test("first_request_and_a_whole_reused_prefix_has_no_cause", async () => {
    const { pod, ledger } = await podWith({
      provider: SONNET,
      answers: [
        { content: "a", usage: usage(900, 0, 0, 5) }, // below the minimum: nothing written yet
        { content: "b", usage: usage(3000, 0, 2900, 5) },
        { content: "c", usage: usage(3100, 2900, 100, 5) },
      ],
    });
    await pod.run("1");
    await pod.run("2");
    await pod.run("3");
    await pod.close();
    expect((await ledger()).map((c) => c.cacheBreak)).toEqual([undefined, { cause: "first-request" }, undefined]);
  });

  test("prefix_changed_names_the_first_differing_message", async () => {
    const { pod, worker, ledger } = await podWith({
      provider: SONNET,
      answers: [
        { content: "a", usage: usage(3000, 0, 2900, 5) },
        { content: "b", usage: usage(3100, 2900, 100, 5) },
        { content: "c", usage: usage(3200, 1500, 1600, 5) },
      ],
    });
    await pod.run("1");
    await pod.run("2");
    // A library caller rewrites the second message (the first answer): what is sent from there on differs.
    const history = worker.getHistory();
    worker.setHistory([history[0]!, { role: "assistant", content: "A" }, ...history.slice(2)]);
    await pod.run("3");
    await pod.close();
    const calls = await ledger();
    expect(calls.at(-1)!.cacheBreak).toEqual({ cause: "prefix-changed", changed: "messages", messageIndex: 1 });
  });

  test("prefix_changed_by_a_new_tool", async () => {
    const { pod, worker, ledger } = await podWith({
      provider: SONNET,
      answers: [
        { content: "a", usage: usage(3000, 0, 2900, 5) },
        { content: "b", usage: usage(3100, 0, 3000, 5) },
      ],
    });
    await pod.run("1");
    worker.tools.register(echoTool("echo"));
    await pod.run("2");
    await pod.close();
    expect((await ledger()).at(-1)!.cacheBreak).toEqual({ cause: "prefix-changed", changed: "tools" });
  });

  test("expired_after_an_idle_gap_over_five_minutes", async () => {
    const { pod, clock, ledger } = await podWith({
      provider: SONNET,
      answers: [
        { content: "a", usage: usage(3000, 0, 2900, 5) },
        { content: "b", usage: usage(3100, 0, 3000, 5) },
        { content: "c", usage: usage(3200, 0, 3100, 5) },
      ],
    });
    await pod.run("1");
    clock.advance(5 * 60_000 + 1);
    await pod.run("2");
    clock.advance(4 * 60_000);
    await pod.run("3");
    await pod.close();
    const calls = await ledger();
    expect(calls[1]!.cacheBreak).toEqual({ cause: "expired", idleMs: 300_001, ttlMs: 300_000 });
    // Within the lifetime, same prefix: the provider dropped it.
    expect(calls[2]!.cacheBreak).toEqual({ cause: "evicted" });
  });

  test("below_minimum_when_the_prompt_is_shorter_than_the_model_caches", async () => {
    const { pod, ledger } = await podWith({
      provider: { kind: "anthropic", model: "claude-haiku-4-5" },
      answers: [
        { content: "a", usage: usage(4200, 0, 4100, 5) },
        { content: "b", usage: usage(4000, 0, 0, 5) },
      ],
    });
    await pod.run("1");
    await pod.run("2");
    await pod.close();
    expect((await ledger()).at(-1)!.cacheBreak).toEqual({ cause: "below-minimum", minimumTokens: 4096 });
  });

  test("compaction_is_the_cause_of_the_first_call_after_it", async () => {
    const { pod, ledger } = await podWith({
      provider: SONNET,
      answers: [
        { content: "a", usage: usage(3000, 0, 2900, 5) },
        { content: "b", usage: usage(1200, 1000, 150, 5) },
      ],
    });
    await pod.run("1");
    await pod.compact(() => "summary");
    await pod.run("2");
    await pod.close();
    const calls = await ledger();
    expect(calls.map((c) => c.cacheBreak?.cause)).toEqual(["first-request", "compaction"]);
    expect(calls.map((c) => c.segment)).toEqual([expect.any(String), expect.any(String)]);
    expect(calls[0]!.segment).not.toBe(calls[1]!.segment);
  });

  test("the_call_record_holds_what_was_sent_not_the_answer", async () => {
    const { pod, store, worker } = await podWith({
      provider: SONNET,
      answers: [{ content: "a", toolCalls: [{ id: "t1", name: "echo", input: {} }] }, { content: "b" }],
    });
    worker.tools.register(echoTool("echo"));
    await pod.run("1");
    await pod.close();
    const { records } = await store.readSegment(pod.segmentId!);
    const calls = records.flatMap((r) =>
      "call" in r ? [(r as { call: { messages: string[]; model: string } }).call] : [],
    );
    // The first call sent the user message; the second also the answer with the tool call and its result.
    expect(calls.map((c) => c.messages.length)).toEqual([1, 3]);
    expect(calls[1]!.messages[0]).toBe(calls[0]!.messages[0]);
    expect(calls[0]).toMatchObject({ provider: "anthropic", model: SONNET.model, sentAt: "2026-01-05T10:00:00.000Z" });
  });

  test("a_restored_pod_records_the_provider_it_is_given_and_compares_across_the_restore", async () => {
    const dir = await makePodDir("You are a pod.\n");
    dirs.push(dir);
    const store = new MemorySegmentStore();
    const clock = handClock();
    const client = new ScriptedLlmClient([
      { content: "a", usage: usage(3000, 0, 2900, 5) },
      { content: "b", usage: usage(3100, 2900, 100, 5) },
    ]);
    const first = await Pod.fromManifest({ ...dir.manifest, provider: SONNET } as PodManifest, {
      worker: new Worker({ client }),
      store,
      callClock: clock,
      env: dir.env,
    });
    await first.run("1");
    await first.close();
    const restored = await Pod.restore(store, first.segmentId!, new Worker({ client }), {
      provider: SONNET,
      callClock: clock,
    });
    await restored.run("2");
    await restored.close();
    const { records } = await store.readSegment(first.segmentId!);
    const last = records.at(-1) as { call?: { model?: string; costUsd?: number } };
    expect(last.call).toMatchObject({ model: SONNET.model, costUsd: expect.closeTo(0.00162, 12) }); // 100×3 + 2900×0.3 + 100×3.75 + 5×15 µ$
    expect((await segmentsOf(store, first.segmentId!)).length).toBe(1);
    const calls = conversationLedger(await segmentsOf(store, first.segmentId!));
    expect(calls.map((c) => c.cacheBreak)).toEqual([{ cause: "first-request" }, undefined]);
  });

  test("calls_without_reported_usage_are_skipped_when_comparing", () => {
    const sent = { sentAt: "2026-01-05T10:00:00.000Z", system: "s", tools: "t", messages: ["m"] };
    const breaks = cacheBreaks([
      { usage: usage(3000, 0, 2900, 5), call: sent, firstAfterCompaction: false },
      { firstAfterCompaction: false },
      { usage: usage(3100, 2900, 100, 5), call: { ...sent, messages: ["m", "n", "o"] }, firstAfterCompaction: false },
    ]);
    expect(breaks).toEqual([{ cause: "first-request" }, undefined, undefined]);
  });
});
