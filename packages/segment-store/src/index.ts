export type {
  OpenSegmentOptions,
  OpenSegmentResult,
  PodWriterLock,
  ReadSegmentResult,
  SegmentStore,
  SegmentWarning,
  SegmentWriter,
} from "./segment-store.ts";
export { isSegmentRecord } from "./segment-record.ts";
export { SharedPodLock } from "./shared-pod-lock.ts";
export type { TakenPodLock } from "./shared-pod-lock.ts";
export type {
  SegmentMessageRecord,
  SegmentRecord,
  SegmentSource,
  SegmentSpan,
  SegmentStartRecord,
  SegmentToolDefinition,
} from "./segment-record.ts";
export { serializeSegmentRecord } from "./segment-codec.ts";
export { compareSegmentIds, formatSegmentId, parseSegmentId } from "./segment-id.ts";
export { SegmentStoreError } from "./segment-store-error.ts";
export type { SegmentLockHolder, SegmentStoreErrorCode, SegmentStoreErrorOptions } from "./segment-store-error.ts";
export { FileSegmentStore } from "./segment-file-store.ts";
export { MemorySegmentStore } from "./segment-memory-store.ts";
