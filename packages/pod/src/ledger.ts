import type { AssistantMessage, LlmUsage, Message } from "@insomnia/worker";
import type { CacheBreak } from "./cache-break.ts";
import { cacheBreaks } from "./cache-break.ts";
import { callCost, priceOf } from "./call-cost.ts";
import type { PricingOverride } from "./call-cost.ts";
import type { CallRecord } from "./call-record.ts";
import { isCallRecord } from "./call-record.ts";

/** One segment of a conversation as read from its log, records in order (segment_start first). */
export interface LedgerSegment {
  readonly id: string;
  /** The segment this one continues after a compaction. */
  readonly previousSegment?: string | undefined;
  /** The segment's records as `readSegment()` returns them. */
  readonly records: readonly unknown[];
}

/** What the ledger needs to know besides the log. */
export interface LedgerOptions {
  /** The model of calls whose log does not name one (logs written before calls were recorded). */
  readonly model?: string | undefined;
  /** `provider.pricing` of the manifest: the prices of `model` (and of calls that name no model). */
  readonly pricing?: PricingOverride | undefined;
}

/** One model call of a conversation. */
export interface LedgerCall {
  /** The segment that logged it, and its message index there (0 is the first message after segment_start). */
  readonly segment: string;
  readonly index: number;
  /** The assistant message the call answered with. */
  readonly message: AssistantMessage;
  readonly model?: string | undefined;
  /** RFC 3339 time the request was sent, when recorded. */
  readonly sentAt?: string | undefined;
  readonly usage?: LlmUsage | undefined;
  /** USD, unrounded; undefined when the usage or a price is unknown. */
  readonly costUsd?: number | undefined;
  /** Why the call did not reuse the cached prefix; undefined when it did. */
  readonly cacheBreak?: CacheBreak | undefined;
}

/** Token counts and cost summed over model calls. */
export interface UsageTotals {
  calls: number;
  /** Calls whose usage the provider reported. */
  reported: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** USD of all calls, unrounded; undefined when any call's cost is unknown. */
  costUsd: number | undefined;
  /** USD of the calls whose cost is known. */
  knownCostUsd: number;
  /** Calls whose cost is unknown (usage not reported, or a price missing). */
  unpricedCalls: number;
}

function isMessageRecord(
  record: unknown,
): record is { type: "message"; message: Message; call?: unknown; compaction?: unknown } {
  return typeof record === "object" && record !== null && (record as { type?: unknown }).type === "message";
}

/**
 * Every model call of a conversation (its segments oldest first) with usage, cost and cache
 * break. A cost logged with the call is kept (the prices in force then); a call logged without
 * one is priced now, from `options.pricing` or the shipped table.
 */
export function conversationLedger(segments: readonly LedgerSegment[], options: LedgerOptions = {}): LedgerCall[] {
  const found: {
    segment: string;
    index: number;
    message: AssistantMessage;
    call?: CallRecord;
    first: boolean;
    branch: boolean;
  }[] = [];
  for (const [position, segment] of segments.entries()) {
    let index = 0;
    let first = position > 0 && segment.previousSegment !== undefined;
    for (const record of segment.records) {
      if (!isMessageRecord(record)) continue;
      const message = record.message;
      if (message?.role === "assistant") {
        const call = isCallRecord(record.call) ? record.call : undefined;
        // A compaction's summary call branches off: the conversation's next call continues the one before it.
        const branch = record.compaction !== undefined;
        found.push({ segment: segment.id, index, message, ...(call === undefined ? {} : { call }), first, branch });
        if (!branch) first = false;
      }
      index += 1;
    }
  }
  const modelOf = (call: CallRecord | undefined) => call?.model ?? options.model;
  const breaks = cacheBreaks(
    found.map(({ message, call, first, branch }) => ({
      usage: message.usage,
      call,
      model: modelOf(call),
      firstAfterCompaction: first,
      branch,
    })),
  );
  return found.map(({ segment, index, message, call }, i) => {
    const model = modelOf(call);
    const override = model === options.model ? options.pricing : undefined;
    const costUsd = call?.costUsd ?? callCost(message.usage, priceOf(model, override), call?.cacheTtl);
    const cacheBreak = breaks[i];
    return {
      segment,
      index,
      message,
      ...(model === undefined ? {} : { model }),
      ...(call === undefined ? {} : { sentAt: call.sentAt }),
      ...(message.usage === undefined ? {} : { usage: message.usage }),
      ...(costUsd === undefined ? {} : { costUsd }),
      ...(cacheBreak === undefined ? {} : { cacheBreak }),
    };
  });
}

/** Sums the usage and cost of the calls given. */
export function usageTotals(calls: readonly Pick<LedgerCall, "usage" | "costUsd">[]): UsageTotals {
  const totals: UsageTotals = {
    calls: 0,
    reported: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    knownCostUsd: 0,
    unpricedCalls: 0,
  };
  for (const { usage, costUsd } of calls) {
    totals.calls += 1;
    if (costUsd === undefined) totals.unpricedCalls += 1;
    else totals.knownCostUsd += costUsd;
    if (usage === undefined) continue;
    totals.reported += 1;
    totals.inputTokens += usage.inputTokens ?? 0;
    totals.outputTokens += usage.outputTokens ?? 0;
    totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
    totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  }
  totals.costUsd = totals.unpricedCalls === 0 ? totals.knownCostUsd : undefined;
  return totals;
}
