import type { LlmUsage } from "@insomnia/worker";
import type { CallRecord } from "./call-record.ts";
import { minimumCacheablePrompt } from "./price-table.ts";

/** Why a model call did not reuse the prefix the previous call cached (or first wrote the cache). */
export type CacheBreakCause =
  | "first-request"
  | "compaction"
  | "prefix-changed"
  | "expired"
  | "below-minimum"
  | "evicted";

/** A call's cache break: its cause, and for `prefix-changed` what differed first. */
export interface CacheBreak {
  readonly cause: CacheBreakCause;
  /** For `prefix-changed`: the part of the request that differed first. */
  readonly changed?: "model" | "system" | "tools" | "messages" | undefined;
  /** For `prefix-changed` in the messages: the index (0-based, in the request) of the first differing message. */
  readonly messageIndex?: number | undefined;
  /** For `expired`: milliseconds between the two requests, and the cache lifetime they exceeded. */
  readonly idleMs?: number | undefined;
  readonly ttlMs?: number | undefined;
  /** For `below-minimum`: the smallest prompt the model caches, in tokens. */
  readonly minimumTokens?: number | undefined;
}

/** One model call as the cause finder sees it. */
export interface CacheCall {
  readonly usage?: LlmUsage | undefined;
  readonly call?: CallRecord | undefined;
  /** The model, from the call record or else the manifest. */
  readonly model?: string | undefined;
  /** True for the first call of a segment that continues another (after a compaction). */
  readonly firstAfterCompaction: boolean;
  /**
   * True for a call that branches off the conversation (a compaction's summary call): it is
   * judged against the call before it, and the call after it is judged against that call too.
   */
  readonly branch?: boolean | undefined;
}

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;

/** The first difference between what `previous` sent and the start of what `current` sent. */
function prefixChange(
  previous: CallRecord,
  current: CallRecord,
  previousModel?: string,
  model?: string,
): CacheBreak | undefined {
  if (previousModel !== model) return { cause: "prefix-changed", changed: "model" };
  if (previous.tools !== current.tools) return { cause: "prefix-changed", changed: "tools" };
  if (previous.system !== current.system) return { cause: "prefix-changed", changed: "system" };
  for (const [index, hash] of previous.messages.entries()) {
    if (current.messages[index] !== hash) return { cause: "prefix-changed", changed: "messages", messageIndex: index };
  }
  return undefined;
}

/** The cause of the break of `current`, which read less than `previous` read and wrote. */
function breakCause(previous: CacheCall, current: CacheCall): CacheBreak {
  if (current.firstAfterCompaction) return { cause: "compaction" };
  if (previous.call !== undefined && current.call !== undefined) {
    const changed = prefixChange(previous.call, current.call, previous.model, current.model);
    if (changed !== undefined) return changed;
    const idleMs = Date.parse(current.call.sentAt) - Date.parse(previous.call.sentAt);
    const ttlMs = previous.call.cacheTtl === "1h" ? ONE_HOUR : FIVE_MINUTES;
    if (idleMs > ttlMs) return { cause: "expired", idleMs, ttlMs };
  }
  const minimumTokens = current.model === undefined ? undefined : minimumCacheablePrompt(current.model);
  const prompt = current.usage?.inputTokens;
  if (minimumTokens !== undefined && prompt !== undefined && prompt < minimumTokens) {
    return { cause: "below-minimum", minimumTokens };
  }
  return { cause: "evicted" };
}

const cached = (usage: LlmUsage | undefined): number => (usage?.cacheReadTokens ?? 0) + (usage?.cacheWriteTokens ?? 0);

/**
 * The cache break of each call of one conversation (oldest first), undefined where the call
 * reused the whole prefix the previous call cached. The first call that writes the cache is
 * `first-request`; a call that read less than the previous call read and wrote gets its cause.
 * Calls whose usage was not reported are skipped: the next call compares with the last one reported.
 */
export function cacheBreaks(calls: readonly CacheCall[]): (CacheBreak | undefined)[] {
  const breaks: (CacheBreak | undefined)[] = [];
  let previous: CacheCall | undefined;
  let written = false;
  for (const current of calls) {
    if (current.usage === undefined) {
      breaks.push(undefined);
      continue;
    }
    const read = current.usage.cacheReadTokens ?? 0;
    if (!written) {
      breaks.push((current.usage.cacheWriteTokens ?? 0) > 0 ? { cause: "first-request" } : undefined);
    } else {
      breaks.push(previous !== undefined && read < cached(previous.usage) ? breakCause(previous, current) : undefined);
    }
    written ||= cached(current.usage) > 0;
    if (current.branch !== true) previous = current;
  }
  return breaks;
}
