export { Pod } from "./pod.ts";
export type { PodDeps, RestoreDeps, Summarizer } from "./pod.ts";
export {
  materialize,
  materializeSystemPrompt,
  prepareSystemPrompt,
  readSkillCatalog,
  skillSourceRef,
} from "./materialize.ts";
export type {
  MaterializedPrompt,
  MaterializedSkills,
  MaterializeInput,
  MaterializeSystemPromptOptions,
  PrepareOptions,
  PreparedSystemPrompt,
} from "./materialize.ts";
export { AGENTS_MD_FILE, AGENTS_MD_MAX_BYTES, readAgentsMd, truncationNotice } from "./agents-md.ts";
export type { AgentsMdResult, ReadableScope } from "./agents-md.ts";
export { SUMMARY_PREFIX, summaryMessage } from "./summary-message.ts";
export { checkSources } from "./source-drift.ts";
export type { RecordedSource } from "./source-drift.ts";
export { systemClock } from "./clock.ts";
export type { Clock } from "./clock.ts";
export { collectWarnings, silentNotifier } from "./pod-warning.ts";
export type { CollectingNotifier, Notifier, PodWarning, PodWarningCode } from "./pod-warning.ts";
export { PodError } from "./pod-error.ts";
export type { PodErrorCode, PodErrorOptions } from "./pod-error.ts";
export { isSegmentRecord } from "./segment-record.ts";
export type { SegmentMessageRecord, SegmentRecord, SegmentSource, SegmentStartRecord } from "./segment-record.ts";
export type {
  OpenSegmentOptions,
  OpenSegmentResult,
  ReadSegmentResult,
  SegmentStore,
  SegmentWarning,
  SegmentWriter,
} from "./segment-store.ts";
export { FileSegmentStore } from "./segment-file-store.ts";
export { MemorySegmentStore } from "./segment-memory-store.ts";
