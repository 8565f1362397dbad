import { createRequire } from "node:module";
import { PodError } from "./pod-error.ts";
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

/**
 * JSON text of `record` as it will be stored; what a reader gets back is `JSON.parse` of it.
 * `expected` is the record type allowed at this place: `segment_start` first, `message` after.
 * Throws a PodError `INVALID_ARGUMENT` for anything else, or a record that does not survive
 * the JSON round trip (e.g. an undefined or BigInt message).
 */
export function serializeSegmentRecord(
  record: SegmentRecord,
  segmentId: string,
  expected: SegmentRecord["type"],
): string {
  const where = expected === "segment_start" ? "cannot create a segment" : `cannot append to segment ${segmentId}`;
  const type = typeof record === "object" && record !== null ? (record as { type?: unknown }).type : undefined;
  if (type !== expected) {
    throw new PodError(
      "INVALID_ARGUMENT",
      `${where}: expected a "${expected}" record, got ${type === undefined ? typeof record : JSON.stringify(type)}` +
        ` (a segment has exactly one segment_start, written by createSegment)`,
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
    throw new PodError(
      "INVALID_ARGUMENT",
      `${where}: the record is not made of JSON data of the right shape` +
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

/** Result of {@link scanSegment}. */
export interface SegmentScan {
  readonly records: SegmentRecord[];
  /** Byte length of the whole records (everything after it is a torn tail). */
  readonly validLength: number;
  /** Why the tail was rejected, when there is one. */
  readonly tailReason?: string;
}

function corrupt(file: string, line: number, reason: string): PodError {
  return new PodError(
    "SEGMENT_CORRUPT",
    `${file}:${line}: segment log is corrupt: ${reason}. The file was left unchanged; ` +
      `restore it from a backup, or start a new segment (a segment log is never repaired in the middle).`,
    { file, line },
  );
}

/**
 * Parses a whole segment file. Records up to the first bad line are returned; bad lines
 * are tolerated only at the very end (a torn tail). Throws a PodError `SEGMENT_CORRUPT`
 * (with `file` and 1-based `line`) for a bad line followed by a whole record, a record
 * out of sequence, a record that is not a record, a segment_start after the first record,
 * or a file without a start record.
 */
export function scanSegment(data: Buffer, file: string): SegmentScan {
  const records: SegmentRecord[] = [];
  let validLength = 0;
  let firstBad: { line: number; reason: string } | undefined;
  let position = 0;
  let lineNumber = 1;
  while (position < data.length) {
    const end = data.indexOf(NEWLINE, position);
    if (end === -1) {
      firstBad ??= { line: lineNumber, reason: "the last line has no newline (an append that did not finish)" };
      break;
    }
    const decoded = decodeLine(data.subarray(position, end));
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
