import type { SegmentRecord, SegmentStartRecord } from "./segment-record.ts";

/** Something a store noticed and recovered from; the caller decides whether to show it. */
export interface SegmentWarning {
  /**
   * `SEGMENT_TAIL_RECOVERED`: a torn or garbage tail (an append that never completed) was cut off.
   * `SEGMENT_LOCK_STALE`: the pod's (or a segment's) writer lock belonged to a process that no longer runs and was taken over.
   */
  readonly code: "SEGMENT_TAIL_RECOVERED" | "SEGMENT_LOCK_STALE";
  readonly message: string;
  readonly file?: string;
}

/** Appends records to one segment; holds that segment, and a share of the pod's writer lock, until closed. */
export interface SegmentWriter {
  readonly segmentId: string;
  /**
   * Appends one `message` record; resolves once it is durable. Appends run in call order.
   * A `segment_start` or non-JSON record is a SegmentStoreError `INVALID_ARGUMENT`.
   */
  append(record: SegmentRecord): Promise<void>;
  /** Waits for pending appends, then releases the lock. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link SegmentStore.openSegment}. */
export interface OpenSegmentOptions {
  /**
   * Cut a torn or garbage tail back to the last whole record (default `true`).
   * With `false`, such a tail is a `SEGMENT_CORRUPT` error and nothing is changed.
   */
  readonly recoverTail?: boolean;
}

/** A segment's records, read without taking its lock. */
export interface ReadSegmentResult {
  /** All whole records, oldest first; `records[0]` is the segment_start record. */
  readonly records: SegmentRecord[];
  readonly warnings: SegmentWarning[];
}

/** A segment re-opened for appending. */
export interface OpenSegmentResult extends ReadSegmentResult {
  readonly writer: SegmentWriter;
}

/** The pod's writer lock as {@link SegmentStore.lockPod} took it. */
export interface PodWriterLock {
  /** `SEGMENT_LOCK_STALE` when a lock left by a dead writer was taken over. */
  readonly warnings: SegmentWarning[];
  /** Gives this share back; the lock is released once the store's writers are closed too. Idempotent. */
  release(): Promise<void>;
}

/**
 * Append-only storage of the segment logs of one pod; an interface so that a shared database
 * can back it. One writer per pod: a store instance takes the pod's writer lock for its first
 * writer (or `lockPod()`) and holds it until the last one is closed (and released); every
 * other instance, thread, process or machine gets `SEGMENT_LOCKED` for `createSegment`,
 * `openSegment` and `lockPod` meanwhile, with nothing written. Reads never lock.
 */
export interface SegmentStore {
  /**
   * Takes the pod's writer lock for this instance, so that the caller can decide under it what
   * to write (restore the latest segment, or start one): take it before `latestSegment()`, or
   * two processes that start one new pod at once both see no segment and fork it. A
   * SegmentStoreError `SEGMENT_LOCKED` when another holds it.
   */
  lockPod(): Promise<PodWriterLock>;
  /** Starts a new segment whose first record is `start`; its id sorts after every existing id. Under the pod's writer lock. */
  createSegment(start: SegmentStartRecord): Promise<SegmentWriter>;
  /** Recovers a segment and re-opens it for appending under the pod's writer lock (one writer per segment). */
  openSegment(segmentId: string, options?: OpenSegmentOptions): Promise<OpenSegmentResult>;
  /** Reads a segment without locking or changing it (an append in flight may show as a torn tail warning). */
  readSegment(segmentId: string): Promise<ReadSegmentResult>;
  /** Ids of all segments, oldest first. */
  listSegments(): Promise<string[]>;
  /** Id of the newest segment, or `undefined` when there is none. */
  latestSegment(): Promise<string | undefined>;
}
