import type { CacheBreak, LedgerCall, UsageTotals } from "@insomnia/pod";
import { cacheShare, count, usd } from "./run-report.ts";

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** Why a call missed the cache, in words: the cause first, as `pod log --json` names it. */
export function cacheBreakText(cacheBreak: CacheBreak): string {
  switch (cacheBreak.cause) {
    case "prefix-changed":
      return cacheBreak.changed === "messages"
        ? `prefix-changed at message ${cacheBreak.messageIndex}`
        : `prefix-changed (${cacheBreak.changed ?? "request"})`;
    case "expired":
      return cacheBreak.idleMs === undefined || cacheBreak.ttlMs === undefined
        ? "expired"
        : `expired (${duration(cacheBreak.idleMs)} idle, the cache lives ${duration(cacheBreak.ttlMs)})`;
    case "below-minimum":
      return cacheBreak.minimumTokens === undefined
        ? "below-minimum"
        : `below-minimum (the model caches ${count(cacheBreak.minimumTokens)} tokens or more)`;
    default:
      return cacheBreak.cause;
  }
}

/** One model call: tokens, cache read and write, cost, and why it missed the cache. */
export function callLine(call: LedgerCall): string {
  const usage = call.usage;
  const cost = call.costUsd === undefined ? "cost unknown" : usd(call.costUsd);
  const tokens =
    usage === undefined
      ? "usage not reported"
      : `${count(usage.inputTokens ?? 0)} input (${count(usage.cacheReadTokens ?? 0)} cache read, ` +
        `${count(usage.cacheWriteTokens ?? 0)} cache write), ${count(usage.outputTokens ?? 0)} output`;
  const cause = call.cacheBreak === undefined ? "" : `, cache break: ${cacheBreakText(call.cacheBreak)}`;
  return `call: ${tokens}, ${cost}${cause}`;
}

/** A call as `pod log --json` gives it: unknown cost and no cache break are null. */
export function callJson(call: LedgerCall): Record<string, unknown> {
  return {
    segment: call.segment,
    index: call.index,
    model: call.model ?? null,
    sentAt: call.sentAt ?? null,
    usage: call.usage ?? null,
    costUsd: call.costUsd ?? null,
    cacheBreak: call.cacheBreak ?? null,
  };
}

/** Totals as `pod log --json` gives them: an unknown cost is null, the cache-read share a whole percentage. */
export function totalsJson(totals: UsageTotals): Record<string, unknown> {
  return { ...totals, costUsd: totals.costUsd ?? null, cacheReadShare: cacheShare(totals) ?? null };
}
