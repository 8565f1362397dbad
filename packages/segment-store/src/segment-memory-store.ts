import { SegmentStoreError } from "./segment-store-error.ts";
import { serializeSegmentRecord } from "./segment-codec.ts";
import { compareSegmentIds, formatSegmentId } from "./segment-id.ts";
import type { SegmentRecord, SegmentStartRecord } from "./segment-record.ts";
import type {
  OpenSegmentResult,
  PodWriterLock,
  ReadSegmentResult,
  SegmentStore,
  SegmentWriter,
} from "./segment-store.ts";

interface MemorySegment {
  // Records are kept as their JSON text, so readers get fresh copies with the same
  // JSON round-trip semantics as the file store.
  readonly records: string[];
  locked: boolean;
}

/**
 * A {@link SegmentStore} in memory, with the file store's semantics minus durability; for tests
 * and embedders. The instance is the whole pod, so its pod writer lock is always its own.
 */
export class MemorySegmentStore implements SegmentStore {
  readonly #segments = new Map<string, MemorySegment>();
  #counter = 0;

  async lockPod(): Promise<PodWriterLock> {
    return { warnings: [], release: async () => {} };
  }

  async createSegment(start: SegmentStartRecord): Promise<SegmentWriter> {
    const json = serializeSegmentRecord(start, "(new)", "segment_start");
    this.#counter += 1;
    const segmentId = formatSegmentId(this.#counter);
    const segment: MemorySegment = { records: [json], locked: true };
    this.#segments.set(segmentId, segment);
    return this.#writer(segmentId, segment);
  }

  async openSegment(segmentId: string): Promise<OpenSegmentResult> {
    const segment = this.#get(segmentId);
    if (segment.locked) {
      throw new SegmentStoreError(
        "SEGMENT_LOCKED",
        `segment ${segmentId} is locked by another writer of this MemorySegmentStore; close that writer first`,
      );
    }
    segment.locked = true;
    return { records: this.#parse(segment), writer: this.#writer(segmentId, segment), warnings: [] };
  }

  async readSegment(segmentId: string): Promise<ReadSegmentResult> {
    return { records: this.#parse(this.#get(segmentId)), warnings: [] };
  }

  async listSegments(): Promise<string[]> {
    return [...this.#segments.keys()].sort(compareSegmentIds);
  }

  async latestSegment(): Promise<string | undefined> {
    return (await this.listSegments()).at(-1);
  }

  #get(segmentId: string): MemorySegment {
    const segment = this.#segments.get(segmentId);
    if (segment === undefined) {
      throw new SegmentStoreError(
        "SEGMENT_NOT_FOUND",
        `segment ${segmentId} does not exist in this MemorySegmentStore; listSegments() shows the segments there`,
      );
    }
    return segment;
  }

  #parse(segment: MemorySegment): SegmentRecord[] {
    return segment.records.map((json) => JSON.parse(json) as SegmentRecord);
  }

  #writer(segmentId: string, segment: MemorySegment): SegmentWriter {
    let closed = false;
    return {
      segmentId,
      async append(record: SegmentRecord): Promise<void> {
        if (closed) {
          throw new SegmentStoreError(
            "SEGMENT_IO",
            `cannot append to segment ${segmentId}: its writer is closed; open the segment again to append`,
          );
        }
        segment.records.push(serializeSegmentRecord(record, segmentId, "message"));
      },
      async close(): Promise<void> {
        if (closed) return;
        closed = true;
        segment.locked = false;
      },
    };
  }
}
