import type { LlmRequest, LlmUsage, Message } from "@insomnia/worker";
import { summaryMessage } from "./summary-message.ts";

/** Why a compaction ran: the threshold was reached, the provider refused a prompt too long, or someone asked. */
export type CompactionReason = "threshold" | "overflow" | "manual";

/**
 * What came of a compaction: `applied` (a new segment holds the summary), `ineffective` (the
 * summary would not bring the conversation under the threshold, so it was not applied) or
 * `failed` (no usable summary: the model called a tool without writing one, or the request did
 * not fit even with old tool outputs left out).
 */
export type CompactionOutcome = "applied" | "ineffective" | "failed";

/** How a pod compacts: the window, the threshold fraction and the instruction. */
export interface CompactionSettings {
  /** Tokens a request may hold; undefined: the model's window is not known and the pod never compacts on its own. */
  readonly window: number | undefined;
  /** Fraction of `window` (`worker.compact_at`) at which the pod compacts, used exactly as written. */
  readonly at: number;
  /** The instruction's prompt reference (`worker.compact_instruction`). */
  readonly instructionRef: string;
  /** The instruction's text, sent as the compaction request's last user message. */
  readonly instruction: string;
}

/** The segment marker of the model call that wrote (or failed to write) a summary. */
export interface CompactionMark {
  /** Why it ran. */
  readonly reason: CompactionReason;
  /** What came of it. */
  readonly outcome: CompactionOutcome;
  /** The instruction's prompt reference. */
  readonly instruction: string;
  /** When the summary was judged: the new segment's estimated size in tokens (prompt, tools, summary, kept messages). */
  readonly estimatedTokens?: number | undefined;
  /** The threshold it was judged against (`compact_at` × window); absent when the window is not known. */
  readonly thresholdTokens?: number | undefined;
  /** True when the request was sent again with the oldest tool outputs replaced by a placeholder. */
  readonly toolOutputsLeftOut?: boolean | undefined;
}

/** What a compaction did, for the caller to report. */
export interface CompactionReport extends CompactionMark {
  /** The segment the conversation continues in (the new one when applied). */
  readonly segmentId: string;
  /** The segment that was compacted. */
  readonly previousSegment: string;
  /** The summary call's usage, when the provider reported it (absent for a caller's own summarizer). */
  readonly usage?: LlmUsage | undefined;
  /** Why it was not applied, as a sentence (for ineffective and failed). */
  readonly message?: string | undefined;
}

/**
 * Tokens a call's request and answer took: what the next request carries at least. The input
 * count is the whole input, its cache reads and writes included; a usage without it counts those.
 */
export function usedTokens(usage: LlmUsage | undefined): number | undefined {
  if (usage === undefined) return undefined;
  const input = usage.inputTokens ?? (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  return input + (usage.outputTokens ?? 0);
}

/** The token count at which the pod compacts: `at × window`, or undefined without a known window. */
export function thresholdTokens(settings: Pick<CompactionSettings, "window" | "at">): number | undefined {
  return settings.window === undefined ? undefined : settings.window * settings.at;
}

/** True when the last call of the current segment reached the threshold. */
export function reachedThreshold(usage: LlmUsage | undefined, settings: CompactionSettings): boolean {
  const used = usedTokens(usage);
  const threshold = thresholdTokens(settings);
  return used !== undefined && threshold !== undefined && used >= threshold;
}

/**
 * A local estimate of the tokens a text takes, with no request: one token per 4 bytes of UTF-8,
 * about what current tokenizers give for English and code (JSON and CJK take more).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / 4);
}

/** What a compaction summarizes and what the new segment keeps after the summary. */
export interface CompactionSplit {
  /** The messages the compaction request sends before its instruction: the history as the model saw it. */
  readonly summarized: readonly Message[];
  /**
   * The messages the new segment keeps after the summary: the turn's user message, and when
   * the turn is inside a tool loop the last tool call with all its results (a pair is never split).
   */
  readonly kept: readonly Message[];
}

/**
 * Splits a history for compaction. A turn about to send its user message (the history ends
 * with it) summarizes everything before it and keeps it; a turn inside a tool loop summarizes
 * everything and keeps its user message and the last call/result pair; a finished turn keeps nothing.
 */
export function splitForCompaction(history: readonly Message[]): CompactionSplit {
  const last = history.at(-1);
  if (last === undefined) return { summarized: [], kept: [] };
  // A compacted segment with nothing after its summary: the summary is summarized again, not kept.
  if (last.role === "user" && history.length === 1 && isSummary(last)) return { summarized: history, kept: [] };
  if (last.role === "user") return { summarized: history.slice(0, -1), kept: [last] };
  if (last.role === "assistant") {
    // A tool call whose results have not come yet: keep it whole with its turn's message.
    if (last.toolCalls !== undefined)
      return { summarized: history, kept: [...turnMessage(history, history.length - 1), last] };
    return { summarized: history, kept: [] };
  }
  let call = history.length - 1;
  while (call >= 0 && history[call]!.role === "tool") call -= 1;
  const pair = call >= 0 && history[call]!.role === "assistant" ? history.slice(call) : history.slice(call + 1);
  return { summarized: history, kept: [...turnMessage(history, call), ...pair] };
}

/** The user message that opened the turn holding index `before` (none when it was a summary or is not found). */
function turnMessage(history: readonly Message[], before: number): Message[] {
  for (let i = before - 1; i >= 0; i -= 1) {
    const message = history[i]!;
    if (message.role !== "user") continue;
    return i === 0 && isSummary(message) ? [] : [message];
  }
  return [];
}

function isSummary(message: Message): boolean {
  return message.role === "user" && message.content.startsWith(summaryMessage("").content);
}

/**
 * The compaction request: the history as the previous request sent it (same system prompt, same
 * tools, same messages, byte for byte) plus what came since, then one user message, the instruction.
 */
export function compactionRequest(
  base: Pick<LlmRequest, "systemPrompt" | "tools">,
  summarized: readonly Message[],
  instruction: string,
): LlmRequest {
  return {
    systemPrompt: base.systemPrompt,
    tools: base.tools,
    messages: [...summarized, { role: "user", content: instruction }],
  };
}

/**
 * The summarized messages with every tool output but the last call's replaced by a visible
 * placeholder: what a compaction request that itself overflowed is sent once more with.
 * Undefined when there is no such output to leave out. The log keeps every output as it was.
 */
export function withoutOldToolOutputs(summarized: readonly Message[]): Message[] | undefined {
  let lastCall = summarized.length - 1;
  while (lastCall >= 0 && summarized[lastCall]!.role === "tool") lastCall -= 1;
  let replaced = 0;
  const messages = summarized.map((message, index) => {
    if (message.role !== "tool" || index > lastCall) return message;
    replaced += 1;
    const { images: _images, ...rest } = message;
    return {
      ...rest,
      content: `[output of ${message.name} left out of the compaction request to fit the context window: ${message.content.length} characters]`,
    };
  });
  return replaced === 0 ? undefined : messages;
}

/**
 * The estimated size of the segment a summary starts: system prompt, tool definitions, the
 * summary message and the kept messages, as text (no request is sent to count them).
 */
export function estimateSegmentTokens(
  base: Pick<LlmRequest, "systemPrompt" | "tools">,
  summary: string,
  kept: readonly Message[],
): number {
  return (
    estimateTokens(base.systemPrompt) +
    estimateTokens(JSON.stringify(base.tools)) +
    estimateTokens(summaryMessage(summary).content) +
    kept.reduce((sum, message) => sum + estimateTokens(JSON.stringify(message)), 0)
  );
}
