// The SegmentStore contract as @insomnia/pod defines it today; replaced by imports from
// @insomnia/segment-store once that package exists.
export interface SegmentSource {
  readonly ref: string;
  readonly file: string;
  readonly sha256: string;
}
export interface SegmentStartRecord {
  readonly type: "segment_start";
  readonly systemPrompt: string;
  readonly sources: readonly SegmentSource[];
  readonly createdAt: string;
  readonly previousSegment?: string;
  readonly summary?: string;
}
export interface SegmentMessageRecord<M = unknown> {
  readonly type: "message";
  readonly message: M;
}
export type SegmentRecord<M = unknown> = SegmentStartRecord | SegmentMessageRecord<M>;
export interface SegmentWarning {
  readonly code: "SEGMENT_TAIL_RECOVERED" | "SEGMENT_LOCK_STALE";
  readonly message: string;
  readonly file?: string;
}
export interface SegmentWriter {
  readonly segmentId: string;
  append(record: SegmentRecord): Promise<void>;
  close(): Promise<void>;
}
export interface OpenSegmentOptions {
  readonly recoverTail?: boolean;
}
export interface ReadSegmentResult {
  readonly records: SegmentRecord[];
  readonly warnings: SegmentWarning[];
}
export interface OpenSegmentResult extends ReadSegmentResult {
  readonly writer: SegmentWriter;
}
export interface SegmentStore {
  createSegment(start: SegmentStartRecord): Promise<SegmentWriter>;
  openSegment(segmentId: string, options?: OpenSegmentOptions): Promise<OpenSegmentResult>;
  readSegment(segmentId: string): Promise<ReadSegmentResult>;
  listSegments(): Promise<string[]>;
  latestSegment(): Promise<string | undefined>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function isSource(value: unknown): value is SegmentSource {
  return (
    isPlainObject(value) &&
    typeof value.ref === "string" &&
    typeof value.file === "string" &&
    typeof value.sha256 === "string"
  );
}
export function isSegmentRecord(value: unknown): value is SegmentRecord {
  if (!isPlainObject(value)) return false;
  if (value.type === "message") return "message" in value && value.message !== undefined;
  if (value.type !== "segment_start") return false;
  return (
    typeof value.systemPrompt === "string" &&
    Array.isArray(value.sources) &&
    value.sources.every(isSource) &&
    typeof value.createdAt === "string" &&
    (value.previousSegment === undefined || typeof value.previousSegment === "string") &&
    (value.summary === undefined || typeof value.summary === "string")
  );
}

const SEGMENT_ID = /^seg-([0-9]{10,})$/;
export function formatSegmentId(n: number): string {
  return `seg-${String(n).padStart(10, "0")}`;
}
export function parseSegmentId(id: string): number | undefined {
  const match = SEGMENT_ID.exec(id);
  if (match === null) return undefined;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) ? n : undefined;
}
