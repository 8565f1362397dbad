import type { SegmentRecord, SegmentStartRecord } from "./segment-record.ts";

/** Something a store noticed and recovered from; the caller decides whether to show it. */
export interface SegmentWarning {
  /**
   * `SEGMENT_TAIL_RECOVERED`: a torn or garbage tail (an append that never completed) was cut off.
   * `SEGMENT_LOCK_STALE`: the segment's lock belonged to a process that no longer runs and was taken over.
   */
  readonly code: "SEGMENT_TAIL_RECOVERED" | "SEGMENT_LOCK_STALE";
  readonly message: string;
  readonly file?: string;
}

/** Appends records to one segment; holds that segment's exclusive lock until closed. */
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

/** Append-only storage of segment logs; an interface so that a shared database can back it. */
export interface SegmentStore {
  /** Starts a new segment whose first record is `start`; its id sorts after every existing id. */
  createSegment(start: SegmentStartRecord): Promise<SegmentWriter>;
  /** Recovers a segment and re-opens it for appending under its exclusive lock. */
  openSegment(segmentId: string, options?: OpenSegmentOptions): Promise<OpenSegmentResult>;
  /** Reads a segment without locking or changing it (an append in flight may show as a torn tail warning). */
  readSegment(segmentId: string): Promise<ReadSegmentResult>;
  /** Ids of all segments, oldest first. */
  listSegments(): Promise<string[]>;
  /** Id of the newest segment, or `undefined` when there is none. */
  latestSegment(): Promise<string | undefined>;
}
