// The public surface of @insomnia/pod: what its README documents, nothing more.
export { COMPACTION_RECORD_VERSION, MESSAGE_FORMAT_VERSION, Pod } from "./pod.ts";
export {
  compactionRequest,
  estimateSegmentTokens,
  estimateTokens,
  reachedThreshold,
  splitForCompaction,
  thresholdTokens,
  usedTokens,
  withoutOldToolOutputs,
} from "./compaction.ts";
export type {
  CompactionMark,
  CompactionOutcome,
  CompactionReason,
  CompactionReport,
  CompactionSettings,
  CompactionSplit,
} from "./compaction.ts";
export { CONTEXT_WINDOW_TABLE_DATE, contextWindowOf, shippedContextWindow } from "./context-window.ts";
export type { OpenDeps, PodDeps, PodSegmentRecord, PodWorker, RestoreDeps, Summarizer } from "./pod.ts";
export {
  renderPodPrompt,
  previewSystemPrompt,
  parsePodInstruction,
  parsePodPrompt,
  readSkillCatalog,
  skillSourceRef,
} from "./pod-prompt.ts";
export type {
  RenderedPodPrompt,
  RenderedSkills,
  RenderPodPromptInput,
  PreviewSystemPromptOptions,
  ParsePodPromptOptions,
  ParsedPodPrompt,
} from "./pod-prompt.ts";
export type { PodToolContext, PodToolFactory } from "./pod-tools.ts";
export { MCP_BOUNDARIES_NOTE, workingBoundaries } from "./working-boundaries.ts";
export { AGENTS_MD_MAX_BYTES, readAgentsMd } from "./agents-md.ts";
export type { AgentsMdResult } from "./agents-md.ts";
export { SUMMARY_PREFIX, summaryMessage } from "./summary-message.ts";
export { systemClock } from "./clock.ts";
export type { Clock } from "./clock.ts";
export { collectWarnings, silentNotifier } from "./pod-warning.ts";
export type { Notifier, PodWarning, PodWarningCode } from "./pod-warning.ts";
export { PodError } from "./pod-error.ts";
export type { PodErrorCode } from "./pod-error.ts";
// The segment log a pod user needs; stores and everything else are in @insomnia/segment-store.
export { FileSegmentStore, MemorySegmentStore, SegmentStoreError } from "@insomnia/segment-store";
export type {
  SegmentMessageRecord,
  SegmentRecord,
  SegmentSource,
  SegmentSpan,
  SegmentStartRecord,
  SegmentStore,
  SegmentToolDefinition,
} from "@insomnia/segment-store";
// The cost ledger: what each model call of a conversation cost, and why a call missed the cache.
export { conversationLedger, usageTotals } from "./ledger.ts";
export type { LedgerCall, LedgerOptions, LedgerSegment, UsageTotals } from "./ledger.ts";
export { cacheBreaks } from "./cache-break.ts";
export type { CacheBreak, CacheBreakCause, CacheCall } from "./cache-break.ts";
export { callCost, priceOf } from "./call-cost.ts";
export type { PricingOverride } from "./call-cost.ts";
export type { CallMessageRecord, CallRecord } from "./call-record.ts";
export { minimumCacheablePrompt, PRICE_TABLE_DATE, shippedPrice } from "./price-table.ts";
export type { ModelPrice } from "./price-table.ts";
