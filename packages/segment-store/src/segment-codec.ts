import { crc32Update } from "./segment-crc32.ts";
import { SegmentStoreError } from "./segment-store-error.ts";
import { isSegmentRecord, type SegmentRecord } from "./segment-record.ts";

/*
 * Line format of a segment file (UTF-8, one record per line, `\n`-terminated):
 *
 *   {"seq":<seq>,"crc":"<crc>","record":<json>}\n
 *
 * - `<seq>`: decimal, no leading zeros; 0 for the first record, then +1 per record.
 * - `<json>`: `JSON.stringify(record)` (no whitespace, so no raw newline).
 * - `<crc>`: CRC-32 (ISO-HDLC, as `node:zlib` `crc32`) of the exact bytes
 *   `{"seq":<seq>,"record":<json>}` — the line without its `"crc":"…",` member and
 *   without the newline — as 8 lowercase hex digits.
 *
 * The checksum is computed over the bytes on disk, never over a re-serialization, so any
 * change of a byte (CRC-32 catches every single-bit flip and every burst up to 32 bits)
 * fails it. A record counts only when its whole line *and* its newline are on disk:
 * `append` writes both in one call and acknowledges after fsync, so a line without its
 * newline was never acknowledged and is treated as a torn tail even if its checksum passes.
 */

const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;
const ASCII_ZERO = 0x30;
/** The fixed parts of a line's header, as bytes. */
const SEQ_OPEN = Buffer.from('{"seq":', "latin1");
const CRC_OPEN = Buffer.from(',"crc":"', "latin1");
const RECORD_OPEN = Buffer.from('","record":', "latin1");
/** Most digits of a `seq` (15: every such number is a safe integer). */
const SEQ_DIGITS = 15;
/** `"crc":"<8 hex>",`: the member the checksum leaves out (it follows `{"seq":<seq>,`). */
const CRC_MEMBER_LENGTH = 17;
/** The shortest header: `{"seq":0,"crc":"<8 hex>","record":`. */
const MIN_HEADER_LENGTH = SEQ_OPEN.length + 1 + CRC_OPEN.length + 8 + RECORD_OPEN.length;
/**
 * The file is decoded to text this many bytes (of whole lines) at a time: one piece for any
 * usual segment, and never a string longer than V8 allows (~512 MiB) for a huge one.
 */
const TEXT_WINDOW_BYTES = 64 * 1024 * 1024;

/**
 * The header of the line being decoded, as {@link readHeader} found it. One object reused
 * line after line (the scan is synchronous), so a healthy line allocates nothing for it.
 */
const header = {
  /** The `seq` value. */
  seq: 0,
  /** Offset just after `{"seq":<seq>,` (where the `crc` member starts). */
  seqEnd: 0,
  /** The `crc` value. */
  crc: 0,
  /** Byte length of the header, up to and including `"record":`. */
  length: 0,
};

function matchesAt(data: Uint8Array, at: number, expected: Uint8Array): boolean {
  for (let k = 0; k < expected.length; k++) if (data[at + k] !== expected[k]) return false;
  return true;
}

/** Value of a lowercase hex digit byte, or -1. */
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/**
 * Reads the header `{"seq":<seq>,"crc":"<crc>","record":` at the start of the line
 * `data[start..end)` into {@link header}: `<seq>` is `0` or 1 to 15 digits without a leading
 * zero, `<crc>` 8 lowercase hex digits. False when the line does not start with one. (Byte by
 * byte, without a regular expression or a string: this runs for every line of a restore.)
 */
function readHeader(data: Uint8Array, start: number, end: number): boolean {
  if (end - start < MIN_HEADER_LENGTH || !matchesAt(data, start, SEQ_OPEN)) return false;
  let at = start + SEQ_OPEN.length;
  let seq = 0;
  if (data[at] === ASCII_ZERO) {
    at += 1;
  } else {
    const digitsEnd = Math.min(at + SEQ_DIGITS, end);
    const first = at;
    for (; at < digitsEnd; at++) {
      const digit = (data[at] as number) - ASCII_ZERO;
      if (digit < 0 || digit > 9) break;
      seq = seq * 10 + digit;
    }
    if (at === first) return false;
  }
  if (end - at < CRC_OPEN.length + 8 + RECORD_OPEN.length || !matchesAt(data, at, CRC_OPEN)) return false;
  const seqEnd = at + 1;
  at += CRC_OPEN.length;
  let crc = 0;
  for (const crcEnd = at + 8; at < crcEnd; at++) {
    const digit = hexValue(data[at] as number);
    if (digit < 0) return false;
    crc = crc * 16 + digit;
  }
  if (!matchesAt(data, at, RECORD_OPEN)) return false;
  header.seq = seq;
  header.seqEnd = seqEnd;
  header.crc = crc;
  header.length = at + RECORD_OPEN.length - start;
  return true;
}

/**
 * The checksum of the line `data[start..end)` (newline excluded) whose header is in
 * {@link header}: the CRC-32 of `{"seq":<seq>,` and of `"record":<json>}`, the bytes around the
 * `crc` member.
 */
function lineCrc(data: Uint8Array, start: number, end: number): number {
  const crc = crc32Update(0, data, start, header.seqEnd);
  return crc32Update(crc, data, header.seqEnd + CRC_MEMBER_LENGTH, end);
}

/**
 * Why the line `data[start..end)` (newline excluded) is not a whole checksummed frame, or
 * undefined when it is (its header is then in {@link header}). A line that fails here is what
 * a crash mid-append or garbage looks like.
 */
function frameProblem(data: Uint8Array, start: number, end: number): string | undefined {
  if (!readHeader(data, start, end)) return "the line is not a framed record";
  if (end - start <= header.length + 1 || data[end - 1] !== CLOSE_BRACE) return "the record is cut short";
  if (lineCrc(data, start, end) !== header.crc) return "checksum mismatch";
  return undefined;
}

/** Thrown by {@link plainJsonReplacer} to stop `JSON.stringify` at the first value that is not plain JSON. */
class NotPlainJson extends Error {}

/** What makes `value` not plain JSON, or undefined when it is (an undefined object property is absent, as in JSON). */
function notPlainJson(value: unknown, inArray: boolean): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `the number ${String(value)}`;
    case "undefined":
      return inArray ? "undefined (or a hole) in an array" : undefined;
    case "bigint":
      return "a BigInt";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    default: {
      if (value === null || Array.isArray(value)) return undefined;
      const proto: unknown = Object.getPrototypeOf(value);
      // A plain object of this realm or another one (whose Object.prototype differs).
      const plain =
        proto === null ||
        (typeof proto === "object" &&
          Object.getPrototypeOf(proto) === null &&
          (proto as { constructor?: { name?: unknown } }).constructor?.name === "Object");
      if (!plain) {
        const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
        return typeof name === "string" && name !== "" ? `a ${name}` : "an object with a prototype";
      }
      return typeof (value as { toJSON?: unknown }).toJSON === "function"
        ? "an object with a toJSON method"
        : undefined;
    }
  }
}

function plainJsonReplacer(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  const problem = notPlainJson(original, Array.isArray(this));
  if (problem !== undefined) throw new NotPlainJson(key === "" ? problem : `${problem} at key ${JSON.stringify(key)}`);
  return value;
}

/**
 * JSON text of `record` as it will be stored; what a reader gets back is `JSON.parse` of it,
 * equal to what was given. `expected` is the record type allowed at this place:
 * `segment_start` first, `message` after. Throws a SegmentStoreError `INVALID_ARGUMENT` for
 * anything else, and for a record that is not plain JSON data (null, booleans, finite numbers,
 * strings, arrays, plain objects): a BigInt, NaN, Infinity, a Map, Set, Date or class instance,
 * a function or symbol, undefined in an array, a cycle — what `JSON.stringify` would drop,
 * change or refuse. (An object property that is undefined counts as absent, as in JSON.)
 */
export function serializeSegmentRecord(
  record: SegmentRecord,
  segmentId: string,
  expected: SegmentRecord["type"],
): string {
  const where = expected === "segment_start" ? "cannot create a segment" : `cannot append to segment ${segmentId}`;
  const type = typeof record === "object" && record !== null ? (record as { type?: unknown }).type : undefined;
  if (type !== expected) {
    throw new SegmentStoreError(
      "INVALID_ARGUMENT",
      `${where}: expected a "${expected}" record, got ${type === undefined ? typeof record : JSON.stringify(type)}` +
        ` (a segment has exactly one segment_start, written by createSegment)`,
    );
  }
  let json: string | undefined;
  let cause: unknown;
  try {
    json = JSON.stringify(record, plainJsonReplacer);
  } catch (error) {
    if (error instanceof NotPlainJson) {
      throw new SegmentStoreError(
        "INVALID_ARGUMENT",
        `${where}: the record is not plain JSON data: it holds ${error.message}. A record (and so every message ` +
          `and tool input) may hold only null, booleans, finite numbers, strings, arrays and plain objects, ` +
          `so that it reads back exactly as it was appended; convert the value first (e.g. a Date to its ISO string)`,
      );
    }
    cause = error;
  }
  if (json === undefined || !isSegmentRecord(JSON.parse(json))) {
    throw new SegmentStoreError(
      "INVALID_ARGUMENT",
      `${where}: the record is not made of plain JSON data of the right shape` +
        ` (a segment_start needs string systemPrompt/createdAt and sources of {ref, file, sha256};` +
        ` a message record needs a defined, JSON-serializable message)`,
      cause === undefined ? {} : { cause },
    );
  }
  return json;
}

/** The bytes of one record line, newline included. */
export function encodeSegmentLine(seq: number, recordJson: string): Buffer {
  // The line with a placeholder checksum, summed in place, then the checksum written over it.
  const line = Buffer.from(`{"seq":${seq},"crc":"00000000","record":${recordJson}}\n`, "utf8");
  const seqEnd = SEQ_OPEN.length + String(seq).length + 1;
  let crc = crc32Update(0, line, 0, seqEnd);
  crc = crc32Update(crc, line, seqEnd + CRC_MEMBER_LENGTH, line.length - 1);
  line.write(crc.toString(16).padStart(8, "0"), seqEnd + CRC_OPEN.length - 1, "latin1");
  return line;
}

const FRAME_START = SEQ_OPEN;

/**
 * Offset of a checksummed frame that starts inside `line` (after its first byte) and runs to
 * the line's end, or undefined. Only a damaged line is searched, so this costs nothing on a
 * healthy log; record JSON escapes every quote inside strings, so `{"seq":` followed by a
 * passing checksum cannot occur inside a healthy record by accident.
 */
function embeddedRecordAt(line: Buffer): number | undefined {
  for (let at = line.indexOf(FRAME_START, 1); at !== -1; at = line.indexOf(FRAME_START, at + 1)) {
    if (frameProblem(line, at, line.length) === undefined) return at;
  }
  return undefined;
}

/** Result of {@link scanSegment}. */
export interface SegmentScan {
  readonly records: SegmentRecord[];
  /** Byte length of the whole records (everything after it is a torn tail). */
  readonly validLength: number;
  /** Why the tail was rejected, when there is one. */
  readonly tailReason?: string;
}

function corrupt(file: string, line: number, reason: string): SegmentStoreError {
  return new SegmentStoreError(
    "SEGMENT_CORRUPT",
    `segment log is corrupt: ${reason}. The file was left unchanged; ` +
      `restore it from a backup, or start a new segment (a segment log is never repaired in the middle).`,
    { file, line },
  );
}

/**
 * Parses a whole segment file. Records up to the first bad line are returned; bad lines
 * are tolerated only at the very end (a torn tail: nothing after the last whole record holds a
 * checksummed frame). Throws a SegmentStoreError `SEGMENT_CORRUPT` (with `file` and 1-based
 * `line`) for a bad line followed by a whole record (also one joined to it by a lost newline), a record
 * out of sequence, a record that is not a record, a segment_start after the first record,
 * or a file without a start record.
 */
export function scanSegment(data: Buffer, file: string, textWindowBytes: number = TEXT_WINDOW_BYTES): SegmentScan {
  const records: SegmentRecord[] = [];
  let validLength = 0;
  let firstBad: { line: number; reason: string } | undefined;
  let position = 0;
  let lineNumber = 1;
  // The file is decoded to text (as a plain read + split does) a window of whole lines at a
  // time, and the text is walked in step with the bytes: a newline byte is a "\n" in the text
  // and nowhere else, so line n of both is the same line. The bytes are checked (header, CRC),
  // the text is parsed: the record's bytes lie between the ASCII header and an ASCII "}", and
  // UTF-8 decoding restarts at every ASCII byte, so their slice of the text is exactly what
  // decoding them alone would give.
  let text = "";
  let windowEnd = 0;
  let textPosition = 0;
  while (position < data.length) {
    const end = data.indexOf(NEWLINE, position);
    if (end === -1) {
      firstBad ??= { line: lineNumber, reason: "the last line has no newline (an append that did not finish)" };
      break;
    }
    if (end >= windowEnd) {
      const limit = Math.min(data.length, position + textWindowBytes);
      windowEnd = limit > end ? data.lastIndexOf(NEWLINE, limit - 1) + 1 : end + 1;
      text = data.toString("utf8", position, windowEnd);
      textPosition = 0;
    }
    const textEnd = text.indexOf("\n", textPosition);
    const problem = frameProblem(data, position, end);
    if (problem === undefined) {
      const seq = header.seq;
      let record: unknown;
      let invalid: string | undefined;
      try {
        record = JSON.parse(text.slice(textPosition + header.length, textEnd - 1));
      } catch {
        invalid = "the record is not JSON although its checksum passes";
      }
      // Checksummed but not a record: written that way on purpose, never a crash artifact.
      if (invalid === undefined && !isSegmentRecord(record)) {
        invalid = "the record is not a known segment record although its checksum passes";
      }
      if (invalid !== undefined) throw corrupt(file, firstBad?.line ?? lineNumber, firstBad?.reason ?? invalid);
      const type = (record as SegmentRecord).type;
      if (firstBad !== undefined) {
        throw corrupt(file, firstBad.line, `${firstBad.reason}, yet a whole record follows at line ${lineNumber}`);
      }
      if (seq !== records.length) {
        throw corrupt(file, lineNumber, `record has seq ${seq}, expected ${records.length}`);
      }
      if (records.length === 0 && type !== "segment_start") {
        throw corrupt(file, lineNumber, `the first record is a "${type}" record, not "segment_start"`);
      }
      if (records.length > 0 && type === "segment_start") {
        throw corrupt(file, lineNumber, `a second "segment_start" record (seq ${seq})`);
      }
      records.push(record as SegmentRecord);
      validLength = end + 1;
    } else {
      const embedded = embeddedRecordAt(data.subarray(position, end));
      if (embedded !== undefined) {
        // A lost newline (or other damage) joined this line to a whole, checksummed one: the
        // damage is followed by more framed data, so it is not a torn append.
        throw corrupt(
          file,
          firstBad?.line ?? lineNumber,
          `${firstBad?.reason ?? problem}, yet a whole record follows inside line ${lineNumber} at byte ${embedded + 1} ` +
            `(its newline was damaged)`,
        );
      }
      firstBad ??= { line: lineNumber, reason: problem };
    }
    position = end + 1;
    textPosition = textEnd + 1;
    lineNumber += 1;
  }
  if (records.length === 0) {
    throw corrupt(
      file,
      1,
      `segment has no start record${firstBad === undefined ? " (the file is empty)" : ` (${firstBad.reason})`}`,
    );
  }
  return firstBad === undefined ? { records, validLength } : { records, validLength, tailReason: firstBad.reason };
}
