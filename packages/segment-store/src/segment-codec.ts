import { createRequire } from "node:module";
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

const HEADER = /^\{"seq":(0|[1-9][0-9]{0,14}),"crc":"([0-9a-f]{8})","record":/;
const HEADER_MAX = 64;
const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;

type Crc32 = typeof import("node:zlib").crc32;
let zlibCrc32: Crc32 | undefined;

/**
 * `node:zlib`'s crc32, loaded on first use: loading zlib adds to every process start, and
 * a pod that never touches its segment log (`pod prompt`) should not pay for it.
 */
function crc32(data: string | Buffer, value?: number): number {
  zlibCrc32 ??= (createRequire(import.meta.url)("node:zlib") as typeof import("node:zlib")).crc32;
  return zlibCrc32(data, value);
}

/** Checksum of one record line as written in its `crc` member. */
function lineCrc(seqText: string, recordJson: Buffer): string {
  let crc = crc32(`{"seq":${seqText},"record":`);
  crc = crc32(recordJson, crc);
  crc = crc32("}", crc);
  return crc.toString(16).padStart(8, "0");
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
  const seqText = String(seq);
  const body = Buffer.from(recordJson, "utf8");
  const crc = lineCrc(seqText, body);
  return Buffer.concat([
    Buffer.from(`{"seq":${seqText},"crc":"${crc}","record":`, "utf8"),
    body,
    Buffer.from("}\n", "utf8"),
  ]);
}

/**
 * A decoded line: a whole `record`; `torn` when framing or checksum fail (what a crash
 * mid-append or garbage looks like); `invalid` when the checksum passes but the content is
 * not a record (written that way on purpose — never a crash artifact).
 */
type DecodedLine =
  | { readonly kind: "record"; readonly seq: number; readonly record: SegmentRecord }
  | { readonly kind: "torn"; readonly reason: string }
  | { readonly kind: "invalid"; readonly reason: string };

function decodeLine(line: Buffer): DecodedLine {
  const header = HEADER.exec(line.toString("latin1", 0, Math.min(line.length, HEADER_MAX)));
  if (header === null) return { kind: "torn", reason: "the line is not a framed record" };
  const headerLength = header[0].length;
  if (line.length <= headerLength + 1 || line[line.length - 1] !== CLOSE_BRACE) {
    return { kind: "torn", reason: "the record is cut short" };
  }
  const seqText = header[1] ?? "";
  const body = line.subarray(headerLength, line.length - 1);
  if (lineCrc(seqText, body) !== header[2]) return { kind: "torn", reason: "checksum mismatch" };
  let record: unknown;
  try {
    record = JSON.parse(body.toString("utf8"));
  } catch {
    return { kind: "invalid", reason: "the record is not JSON although its checksum passes" };
  }
  if (!isSegmentRecord(record)) {
    return { kind: "invalid", reason: "the record is not a known segment record although its checksum passes" };
  }
  return { kind: "record", seq: Number(seqText), record };
}

/** The header as {@link HEADER}, matched in place in the decoded text (sticky: at `lastIndex` only). */
const HEADER_AT = /\{"seq":(0|[1-9][0-9]{0,14}),"crc":"([0-9a-f]{8})","record":/y;
/** `"crc":"<8 hex>",`: the member the checksum leaves out. */
const CRC_MEMBER_LENGTH = 17;

let crcTable: Int32Array | undefined;

/** CRC-32 (ISO-HDLC, as zlib's) of the chars `start..end` of an ASCII string, in JS: for the few bytes of a line's `{"seq":<seq>,`. */
function crc32Ascii(text: string, start: number, end: number): number {
  if (crcTable === undefined) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  let crc = -1;
  for (let i = start; i < end; i++) crc = (crcTable[(crc ^ text.charCodeAt(i)) & 0xff] as number) ^ (crc >>> 8);
  return ~crc >>> 0;
}

/**
 * The restore path's decoder of a healthy line, or undefined when the line is anything else
 * (then {@link decodeLine} decides, and says why). It makes exactly decodeLine's checks and
 * returns what decodeLine would: the same header, the line ends in `}`, the CRC-32 over the
 * same bytes, `JSON.parse` of the same record text, the record shape. It only avoids the
 * per-line costs: the header is matched in the file's text (a matched header is ASCII, so its
 * chars are its bytes), the record is parsed from a slice of that text (the bytes between an
 * ASCII header and an ASCII `}` decode alone as they do in the whole file), and the checksum
 * takes one native call over the bytes after the `crc` member.
 */
function fastDecodeLine(
  data: Buffer,
  start: number,
  end: number,
  text: string,
  textStart: number,
  textEnd: number,
): DecodedLine | undefined {
  HEADER_AT.lastIndex = textStart;
  const header = HEADER_AT.exec(text);
  if (header === null) return undefined;
  const headerLength = header[0].length;
  if (end - start <= headerLength + 1 || data[end - 1] !== CLOSE_BRACE) return undefined;
  const seqText = header[1] as string;
  // `{"seq":<seq>,` then everything after the crc member: `"record":<json>}`.
  const seqEnd = 8 + seqText.length;
  let crc = crc32Ascii(text, textStart, textStart + seqEnd);
  crc = crc32(data.subarray(start + seqEnd + CRC_MEMBER_LENGTH, end), crc);
  if (crc !== Number.parseInt(header[2] as string, 16)) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text.slice(textStart + headerLength, textEnd - 1));
  } catch {
    return undefined;
  }
  if (!isSegmentRecord(record)) return undefined;
  return { kind: "record", seq: Number(seqText), record };
}

const FRAME_START = Buffer.from('{"seq":', "latin1");

/**
 * Offset of a checksummed frame that starts inside `line` (after its first byte) and runs to
 * the line's end, or undefined. Only a damaged line is searched, so this costs nothing on a
 * healthy log; record JSON escapes every quote inside strings, so `{"seq":` followed by a
 * passing checksum cannot occur inside a healthy record by accident.
 */
function embeddedRecordAt(line: Buffer): number | undefined {
  for (let at = line.indexOf(FRAME_START, 1); at !== -1; at = line.indexOf(FRAME_START, at + 1)) {
    if (decodeLine(line.subarray(at)).kind !== "torn") return at;
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
export function scanSegment(data: Buffer, file: string): SegmentScan {
  const records: SegmentRecord[] = [];
  let validLength = 0;
  let firstBad: { line: number; reason: string } | undefined;
  let position = 0;
  let lineNumber = 1;
  // The whole file decoded once (as a plain read + split does), walked in step with the bytes:
  // a newline byte is a "\n" in the text and nowhere else, so line n of both is the same line.
  const text = data.toString("utf8");
  let textPosition = 0;
  while (position < data.length) {
    const end = data.indexOf(NEWLINE, position);
    if (end === -1) {
      firstBad ??= { line: lineNumber, reason: "the last line has no newline (an append that did not finish)" };
      break;
    }
    const textEnd = text.indexOf("\n", textPosition);
    const decoded =
      fastDecodeLine(data, position, end, text, textPosition, textEnd) ?? decodeLine(data.subarray(position, end));
    textPosition = textEnd + 1;
    if (decoded.kind === "record") {
      if (firstBad !== undefined) {
        throw corrupt(file, firstBad.line, `${firstBad.reason}, yet a whole record follows at line ${lineNumber}`);
      }
      if (decoded.seq !== records.length) {
        throw corrupt(file, lineNumber, `record has seq ${decoded.seq}, expected ${records.length}`);
      }
      if (records.length === 0 && decoded.record.type !== "segment_start") {
        throw corrupt(file, lineNumber, `the first record is a "${decoded.record.type}" record, not "segment_start"`);
      }
      if (records.length > 0 && decoded.record.type === "segment_start") {
        throw corrupt(file, lineNumber, `a second "segment_start" record (seq ${decoded.seq})`);
      }
      records.push(decoded.record);
      validLength = end + 1;
    } else if (decoded.kind === "invalid") {
      throw corrupt(file, firstBad?.line ?? lineNumber, firstBad?.reason ?? decoded.reason);
    } else {
      const embedded = embeddedRecordAt(data.subarray(position, end));
      if (embedded !== undefined) {
        // A lost newline (or other damage) joined this line to a whole, checksummed one: the
        // damage is followed by more framed data, so it is not a torn append.
        throw corrupt(
          file,
          firstBad?.line ?? lineNumber,
          `${firstBad?.reason ?? decoded.reason}, yet a whole record follows inside line ${lineNumber} at byte ${embedded + 1} ` +
            `(its newline was damaged)`,
        );
      }
      firstBad ??= { line: lineNumber, reason: decoded.reason };
    }
    position = end + 1;
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
