import { PostgresStoreError } from "./postgres-store-error.ts";
import { isSegmentRecord, type SegmentRecord } from "./segment-contract.ts";

/**
 * JSON text of `record` as it will be stored; an `INVALID_ARGUMENT` error unless it is a
 * record of type `expected` made of JSON data (what a reader gets back is `JSON.parse` of it).
 */
export function serializeRecord(record: SegmentRecord, segmentId: string, expected: SegmentRecord["type"]): string {
  const where = expected === "segment_start" ? "cannot create a segment" : `cannot append to segment ${segmentId}`;
  const type = typeof record === "object" && record !== null ? (record as { type?: unknown }).type : undefined;
  if (type !== expected) {
    throw new PostgresStoreError(
      "INVALID_ARGUMENT",
      `${where}: expected a "${expected}" record, got ${type === undefined ? typeof record : JSON.stringify(type)}` +
        " (a segment has exactly one segment_start, written by createSegment)",
    );
  }
  let json: string | undefined;
  let cause: unknown;
  try {
    json = JSON.stringify(record);
  } catch (error) {
    cause = error;
  }
  if (json === undefined || !isSegmentRecord(JSON.parse(json))) {
    throw new PostgresStoreError(
      "INVALID_ARGUMENT",
      `${where}: the record is not made of JSON data of the right shape` +
        " (a segment_start needs string systemPrompt/createdAt and sources of {ref, file, sha256};" +
        " a message record needs a defined, JSON-serializable message)",
      { cause },
    );
  }
  return json;
}
