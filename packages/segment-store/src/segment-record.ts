/** One file that went into a stored system prompt (structurally a template source). */
export interface SegmentSource {
  /** The prompt reference, e.g. `$insomnia/default`. */
  readonly ref: string;
  /** The real path that was read. */
  readonly file: string;
  /** Hex SHA-256 of the file's bytes. */
  readonly sha256: string;
}

/** First record of every segment: the materialized system prompt, byte for byte. */
export interface SegmentStartRecord {
  readonly type: "segment_start";
  readonly systemPrompt: string;
  readonly sources: readonly SegmentSource[];
  /** RFC 3339 time the segment was started. */
  readonly createdAt: string;
  /** Id of the segment this one continues (after compaction). */
  readonly previousSegment?: string;
  /** Summary of the previous segment's history (after compaction). */
  readonly summary?: string;
  /** The tool names the prompt was rendered with, sorted (absent in segments written before they were recorded). */
  readonly tools?: readonly string[];
  /**
   * The tool definitions the pod sends, exactly as sent, sorted by name: frozen for the pod's
   * life, so a restore sends them again (absent in segments written before they were recorded).
   */
  readonly toolDefinitions?: readonly SegmentToolDefinition[];
  /**
   * Where each section lies in `systemPrompt`: `{ start, end }` offsets in UTF-16 code units,
   * by section name (`instruction`, `workingBoundaries`, `skills`, `agentsMd`); absent in older segments.
   */
  readonly sections?: Readonly<Record<string, SegmentSpan>>;
}

/** One tool as the model is told about it (structurally the worker's `ToolDefinition`). */
export interface SegmentToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** A part of a stored system prompt: `systemPrompt.slice(start, end)`. */
export interface SegmentSpan {
  readonly start: number;
  readonly end: number;
}

/** A conversation message; its shape belongs to the worker and is opaque to the log. */
export interface SegmentMessageRecord<M = unknown> {
  readonly type: "message";
  /** The version of the message's shape, set by the writer (absent: the first, text-only one). */
  readonly version?: number;
  readonly message: M;
}

/** One record of a segment log: plain JSON data. */
export type SegmentRecord<M = unknown> = SegmentStartRecord | SegmentMessageRecord<M>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

function isSpan(value: unknown): value is SegmentSpan {
  return (
    isPlainObject(value) &&
    Number.isSafeInteger(value.start) &&
    Number.isSafeInteger(value.end) &&
    (value.start as number) >= 0 &&
    (value.start as number) <= (value.end as number)
  );
}

function isOptionalStringList(value: unknown): boolean {
  return value === undefined || (Array.isArray(value) && value.every((item) => typeof item === "string"));
}

function isOptionalSpans(value: unknown): boolean {
  return value === undefined || (isPlainObject(value) && Object.values(value).every(isSpan));
}

function isOptionalToolDefinitions(value: unknown): boolean {
  return (
    value === undefined ||
    (Array.isArray(value) &&
      value.every(
        (item) =>
          isPlainObject(item) &&
          typeof item.name === "string" &&
          typeof item.description === "string" &&
          isPlainObject(item.inputSchema),
      ))
  );
}

function isSource(value: unknown): value is SegmentSource {
  return (
    isPlainObject(value) &&
    typeof value.ref === "string" &&
    typeof value.file === "string" &&
    typeof value.sha256 === "string"
  );
}

/** True when `value` (parsed JSON) has the shape of a {@link SegmentRecord}. */
export function isSegmentRecord(value: unknown): value is SegmentRecord {
  if (!isPlainObject(value)) return false;
  if (value.type === "message") {
    const version = value.version;
    const known = version === undefined || (Number.isSafeInteger(version) && (version as number) >= 1);
    return known && "message" in value && value.message !== undefined;
  }
  if (value.type !== "segment_start") return false;
  return (
    typeof value.systemPrompt === "string" &&
    Array.isArray(value.sources) &&
    value.sources.every(isSource) &&
    typeof value.createdAt === "string" &&
    isOptionalString(value.previousSegment) &&
    isOptionalString(value.summary) &&
    isOptionalStringList(value.tools) &&
    isOptionalToolDefinitions(value.toolDefinitions) &&
    isOptionalSpans(value.sections)
  );
}
