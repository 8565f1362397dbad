import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sampledOffsets } from "./__fixtures__/sampled-offsets.ts";
import { SegmentStoreError, type SegmentStoreErrorCode } from "./segment-store-error.ts";
import { encodeSegmentLine, scanSegment } from "./segment-codec.ts";
import { FileSegmentStore } from "./segment-file-store.ts";
import { formatSegmentId } from "./segment-id.ts";
import type { SegmentRecord, SegmentStartRecord } from "./segment-record.ts";
import type { OpenSegmentResult, ReadSegmentResult } from "./segment-store.ts";
import { guarded as recordOutput } from "../../../test/support/output-guard.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// The segment log under hostile bytes: a crash at every byte offset, random garbage tails,
// every single bit of a whole log flipped, and lines forged with a correct checksum.
// Invariants: no record is ever invented (what comes back is a prefix of what was written);
// an acknowledged record is lost only with a hard error (SEGMENT_CORRUPT), or — for the
// last whole line(s), which a torn append cannot be told apart from — with the documented
// SEGMENT_TAIL_RECOVERED warning; in strict mode (recoverTail: false) only with a hard error.
// Every file-store case goes through a real FileSegmentStore on disk.

const SEED = 0x5e6_0001;
const GARBAGE_RUNS = propertyRuns(200, 3_000);
const FORGED_RUNS = propertyRuns(100, 1_000);
const CODES: ReadonlySet<SegmentStoreErrorCode> = new Set([
  "SEGMENT_CORRUPT",
  "SEGMENT_LOCKED",
  "SEGMENT_NOT_FOUND",
  "SEGMENT_IO",
  "INVALID_ARGUMENT",
]);

const counts = {
  cases: 0,
  crash: 0,
  garbage: 0,
  flips: 0,
  forged: 0,
  viaStore: 0,
  typedErrors: 0,
  withCode: 0,
  withPosition: 0,
  correct: 0,
  invented: 0,
  lostWithHardError: 0,
  lostWithWarning: 0,
  lostSilently: 0,
};

const start: SegmentStartRecord = {
  type: "segment_start",
  systemPrompt:
    'You are a pod.\n\n---\n## Working boundaries\n\nReadable:\n  - /w\n{"seq":1,"crc":"00000000","record":{}}\n',
  sources: [{ ref: "$workspace/main", file: "/w/.insomnia/prompts/main.md", sha256: "ab".repeat(32) }],
  createdAt: "2025-01-02T03:04:05Z",
};
const CONTENTS = [
  "plain",
  "日本語\n改行",
  '}\n{"seq":2,"crc":"deadbeef","record":{"type":"message","message":1}}\n',
  "\u2028\u2029 \u0000 \u001f \ud800 lone",
  "🙂👍🏽 e\u0301",
  "\\n \\u0000 \" ' `",
];
const RECORDS: SegmentRecord[] = [
  start,
  ...Array.from(
    { length: 11 },
    (_, n): SegmentRecord => ({
      type: "message",
      message: { role: n % 2 === 0 ? "user" : "assistant", content: `${CONTENTS[n % CONTENTS.length]} #${n}` },
    }),
  ),
];

let dir: string;
let store: FileSegmentStore;
let log: Buffer;
/** Offset just after each line's newline. */
let lineEnds: number[];
let expectedRecords: SegmentRecord[];
const FILE = "/segments/seg-0000000001.jsonl";
const ID = formatSegmentId(1);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "insomnia-segment-hostile-"));
  const source = new FileSegmentStore(join(dir, "source"));
  const writer = await source.createSegment(start);
  for (const record of RECORDS.slice(1)) await writer.append(record);
  await writer.close();
  log = await readFile(source.segmentFile(writer.segmentId));
  lineEnds = [];
  for (let i = log.indexOf(0x0a); i !== -1; i = log.indexOf(0x0a, i + 1)) lineEnds.push(i + 1);
  // What a reader gets back is the JSON round trip of what was appended (a lone surrogate stays one).
  expectedRecords = RECORDS.map((r) => JSON.parse(JSON.stringify(r)) as SegmentRecord);
  store = new FileSegmentStore(join(dir, "store"));
  await mkdir(store.dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  console.log(
    `[hostile-input] @insomnia/segment-store segment log (seed ${SEED}): ${counts.cases} cases (${counts.crash} crash offsets, ${counts.garbage} garbage tails, ` +
      `${counts.flips} bit flips, ${counts.forged} forged checksummed lines; ${counts.viaStore} also through FileSegmentStore on disk), ` +
      `${counts.typedErrors} typed errors (${counts.withCode} with a code, ${counts.withPosition} with a position), ${counts.correct} correct results, ` +
      `${counts.invented} records invented, ${counts.lostSilently} acknowledged records lost without an error or warning; ` +
      `${counts.lostWithHardError} damaged logs refused with a hard error (file kept), ` +
      `${counts.lostWithWarning} recovered with a SEGMENT_TAIL_RECOVERED warning that dropped acknowledged records (damage in the last whole line)`,
  );
});

// ---- helpers ----------------------------------------------------------------------------

function check(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

/** Whole records (newline included) within the first `length` bytes of the log. */
function wholeLines(length: number): number {
  let n = 0;
  while (n < lineEnds.length && (lineEnds[n] ?? Infinity) <= length) n += 1;
  return n;
}

/** The line (0-based) holding byte `offset` of the log. */
function lineOf(offset: number): number {
  let n = 0;
  while ((lineEnds[n] ?? Infinity) <= offset) n += 1;
  return n;
}

type Outcome =
  | { kind: "records"; records: SegmentRecord[]; tail: boolean }
  | { kind: "error"; error: SegmentStoreError };

function scan(data: Buffer): Outcome {
  try {
    const result = scanSegment(data, FILE);
    return { kind: "records", records: result.records, tail: result.tailReason !== undefined };
  } catch (error) {
    if (!SegmentStoreError.is(error)) throw error;
    return { kind: "error", error };
  }
}

/**
 * Checks an outcome against the acknowledged records (`acked` of them on disk, whole) and
 * counts it. `lossAllowed`: how many acknowledged records a warned tail recovery may drop.
 */
function judge(outcome: Outcome, acked: number, expectTail: boolean | undefined, what: () => string): void {
  if (outcome.kind === "error") {
    const e = outcome.error;
    check(CODES.has(e.code) && e.code === "SEGMENT_CORRUPT", () => `${what()}: ${e.code} ${e.message}`);
    check(
      typeof e.line === "number" && e.line >= 1 && e.file !== undefined,
      () => `${what()}: corrupt without file:line`,
    );
    counts.typedErrors += 1;
    counts.withCode += 1;
    counts.withPosition += 1;
    if (acked > 0) counts.lostWithHardError += 1;
    return;
  }
  const { records, tail } = outcome;
  // Never invented: whatever comes back is exactly a prefix of what was appended.
  if (
    records.length > expectedRecords.length ||
    !isDeepStrictEqual(records, expectedRecords.slice(0, records.length))
  ) {
    counts.invented += 1;
    throw new Error(`${what()}: records differ from what was written`);
  }
  check(records.length > 0, () => `${what()}: a segment without its start record was accepted`);
  if (records.length < acked) {
    if (!tail) {
      counts.lostSilently += 1;
      throw new Error(`${what()}: ${acked - records.length} acknowledged records lost without an error or warning`);
    }
    counts.lostWithWarning += 1;
  }
  if (expectTail !== undefined)
    check(tail === expectTail, () => `${what()}: tail warning ${tail}, expected ${expectTail}`);
  counts.correct += 1;
}

/** The same bytes through the file store: read, strict open, recovering open + append + re-read. */
async function viaStore(data: Buffer, scanned: Outcome, what: () => string): Promise<void> {
  counts.viaStore += 1;
  const file = store.segmentFile(ID);
  await writeFile(file, data);
  const read = await store.readSegment(ID).catch((error: unknown) => error);
  if (scanned.kind === "error") {
    check(
      SegmentStoreError.is(read) && read.code === "SEGMENT_CORRUPT" && read.line === scanned.error.line,
      () => `${what()}: readSegment gave ${String(read)}`,
    );
    const opened = await store.openSegment(ID).catch((error: unknown) => error);
    check(
      SegmentStoreError.is(opened) && opened.code === "SEGMENT_CORRUPT",
      () => `${what()}: openSegment gave ${String(opened)}`,
    );
    // A hard error leaves the file exactly as it was.
    check((await readFile(file)).equals(data), () => `${what()}: a corrupt segment was modified`);
    return;
  }
  const r = read as ReadSegmentResult;
  check(isDeepStrictEqual(r.records, scanned.records), () => `${what()}: readSegment records differ from scanSegment`);
  check(
    r.warnings.map((w) => w.code).join() === (scanned.tail ? "SEGMENT_TAIL_RECOVERED" : ""),
    () => `${what()}: readSegment warnings`,
  );
  if (scanned.tail) {
    const strict = await store.openSegment(ID, { recoverTail: false }).catch((error: unknown) => error);
    check(
      SegmentStoreError.is(strict) && strict.code === "SEGMENT_CORRUPT" && typeof strict.line === "number",
      () => `${what()}: strict open gave ${String(strict)}`,
    );
    check((await readFile(file)).equals(data), () => `${what()}: strict open modified the file`);
  }
  const opened = (await store.openSegment(ID)) as OpenSegmentResult;
  check(isDeepStrictEqual(opened.records, scanned.records), () => `${what()}: openSegment records differ`);
  const appended: SegmentRecord = { type: "message", message: { role: "user", content: "after recovery" } };
  await opened.writer.append(appended);
  await opened.writer.close();
  const after = await store.readSegment(ID);
  check(
    after.warnings.length === 0 && isDeepStrictEqual(after.records, [...scanned.records, appended]),
    () => `${what()}: append after recovery`,
  );
}

async function guarded(run: () => Promise<void>): Promise<void> {
  const { printed, rejections } = await recordOutput(run);
  expect(printed).toEqual([]);
  expect(rejections).toEqual([]);
}

// ---- generators -------------------------------------------------------------------------

function lineAt(index: number): Buffer {
  return log.subarray(index === 0 ? 0 : (lineEnds[index - 1] ?? 0), lineEnds[index]);
}

/** Tails no append could have acknowledged: they never hold a whole line with a valid checksum. */
const garbageArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 400 }).map((b) => Buffer.from(b)),
  fc.string({ unit: "binary", minLength: 1, maxLength: 120 }).map((s) => Buffer.from(s, "utf8")),
  fc.integer({ min: 1, max: 8192 }).map((n) => Buffer.alloc(n)), // zero-filled blocks after a crash
  fc
    .array(fc.constantFrom("\n", "{", "}", '"seq":', '{"seq":12,"crc":"', "00000000", '","record":', "\r\n", " "), {
      minLength: 1,
      maxLength: 20,
    })
    .map((t) => Buffer.from(t.join(""))),
  // A real line cut short, or whole with a wrong checksum, or a real line's prefix repeated.
  fc.tuple(fc.integer({ min: 1, max: RECORDS.length - 1 }), fc.nat()).map(([i, cut]) => {
    const line = lineAt(i);
    return Buffer.from(line.subarray(0, 1 + (cut % (line.length - 1))));
  }),
  fc
    .tuple(fc.integer({ min: 1, max: RECORDS.length - 1 }), fc.nat(), fc.integer({ min: 1, max: 255 }))
    .map(([i, at, x]) => {
      const line = Buffer.from(lineAt(i));
      const k = at % (line.length - 1);
      line[k] = (line[k] ?? 0) ^ x;
      return line;
    }),
);

interface Forged {
  line: Buffer;
  /** What reading must do with it: append a record, or refuse the file. */
  accept: boolean;
}

/** Lines with a correct checksum over hostile content: only a real next record may be accepted. */
const forgedArb: fc.Arbitrary<Forged> = fc.oneof(
  fc.constantFrom(-1, 0, 1, 2, 5, 999_999_999_999_999).map((delta) => {
    const seq = delta === -1 ? RECORDS.length - 1 : delta === 0 ? 0 : delta >= 999 ? delta : RECORDS.length + delta;
    return { line: encodeSegmentLine(seq, JSON.stringify({ type: "message", message: "replayed" })), accept: false };
  }),
  fc
    .constantFrom(
      JSON.stringify(start),
      '{"type":"message"}',
      '{"type":"segment_end"}',
      '{"type":"message","message":null}',
      "[]",
      "null",
      "1",
      '"message"',
      "not json",
      '{"type":"message","message":1',
      '{"type":"segment_start","systemPrompt":1}',
    )
    .map((json) => ({
      line: encodeSegmentLine(RECORDS.length, json),
      accept: json === '{"type":"message","message":null}',
    })),
  // A real next record with hostile content: deep nesting, a huge string, prototype keys.
  fc
    .oneof(
      fc.integer({ min: 1, max: 200_000 }).map((n) => `{"type":"message","message":${"[".repeat(n)}${"]".repeat(n)}}`),
      fc.integer({ min: 1, max: 500_000 }).map((n) => JSON.stringify({ type: "message", message: "x".repeat(n) })),
      fc.constant('{"type":"message","message":{"__proto__":{"polluted":true},"constructor":1}}'),
    )
    .map((json) => ({ line: encodeSegmentLine(RECORDS.length, json), accept: true })),
);

// ---- tests ------------------------------------------------------------------------------

describe("segment log under hostile bytes", () => {
  it(
    "crash_at_every_byte_recovers_exactly_the_acknowledged_records",
    async () => {
      // Every offset is scanned; the real store (a write and two opens each) sees every offset on
      // the deep run, and on the quick one each record's edges (±2), the first and last bytes and every 29th offset.
      const throughStore = new Set(sampledOffsets(0, log.length, lineEnds, 29));
      await guarded(async () => {
        for (let length = 0; length <= log.length; length += 1) {
          counts.cases += 1;
          counts.crash += 1;
          const data = log.subarray(0, length);
          const acked = wholeLines(length);
          const outcome = scan(data);
          const what = (): string => `crash at byte ${length}`;
          if (acked === 0)
            check(
              outcome.kind === "error" && outcome.error.line === 1,
              () => `${what()}: no start record must be corrupt at line 1`,
            );
          else
            check(
              outcome.kind === "records" && outcome.records.length === acked,
              () => `${what()}: expected ${acked} records`,
            );
          judge(outcome, acked, acked === 0 ? undefined : length > (lineEnds[acked - 1] ?? 0), what);
          if (throughStore.has(length)) await viaStore(Buffer.from(data), outcome, what);
        }
      });
      expect(counts.crash).toBe(log.length + 1);
      expect(counts.invented + counts.lostSilently).toBe(0);
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it("garbage_tails_are_cut_back_to_the_last_whole_record", async () => {
    await guarded(async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: RECORDS.length }), garbageArb, async (whole, tail) => {
          counts.cases += 1;
          counts.garbage += 1;
          run += 1;
          const data = Buffer.concat([log.subarray(0, lineEnds[whole - 1]), tail]);
          const outcome = scan(data);
          const what = (): string => `${tail.length}-byte garbage tail after ${whole} records`;
          check(
            outcome.kind === "records" && outcome.records.length === whole,
            () =>
              `${what()}: expected ${whole} records, got ${outcome.kind === "error" ? outcome.error.message : outcome.records.length}`,
          );
          judge(outcome, whole, true, what);
          if (run % 10 === 0) await viaStore(data, outcome, what);
        }),
        { seed: SEED, numRuns: GARBAGE_RUNS, endOnFailure: true },
      );
    });
    expect(counts.invented + counts.lostSilently).toBe(0);
  });

  it("every_single_bit_flip_is_a_hard_error_or_a_warned_prefix", async () => {
    // Every bit of every byte on the deep run; on the quick one every bit of a fixed sample of bytes
    // that keeps each record's edges (±2), the first and last bytes and every 5th byte.
    const offsets = sampledOffsets(0, log.length - 1, lineEnds, 5);
    await guarded(async () => {
      const n = lineEnds.length;
      for (const [index, offset] of offsets.entries()) {
        for (let bit = 0; bit < 8; bit += 1) {
          counts.cases += 1;
          counts.flips += 1;
          const data = Buffer.from(log);
          data[offset] = (data[offset] ?? 0) ^ (1 << bit);
          const outcome = scan(data);
          const line = lineOf(offset);
          const what = (): string => `bit ${bit} of byte ${offset} (line ${line + 1})`;
          if (line === n - 1) {
            // The last whole line reads as a torn append. A flipped newline before it joins two
            // lines, and damage followed by a whole record is corruption (issue 16, defect 1).
            const kept = n - 1;
            check(
              outcome.kind === "records" && outcome.records.length === kept && outcome.tail,
              () => `${what()}: expected ${kept} records and a tail warning`,
            );
          } else {
            check(
              outcome.kind === "error" && outcome.error.line === line + 1,
              () =>
                `${what()}: expected SEGMENT_CORRUPT at line ${line + 1}, got ${outcome.kind === "error" ? outcome.error.line : "records"}`,
            );
          }
          judge(outcome, n, undefined, what);
          if ((index * 8 + bit) % 61 === 0) await viaStore(data, outcome, what);
        }
      }
    });
    expect(counts.flips).toBe(offsets.length * 8);
    expect(counts.invented + counts.lostSilently).toBe(0);
  });

  it("forged_checksummed_lines_are_refused_unless_they_are_the_next_record", async () => {
    await guarded(async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(forgedArb, fc.option(garbageArb, { nil: undefined }), async (forged, tail) => {
          counts.cases += 1;
          counts.forged += 1;
          run += 1;
          const data = Buffer.concat([log, forged.line, tail ?? Buffer.alloc(0)]);
          const outcome = scan(data);
          const what = (): string => `forged line ${forged.line.subarray(0, 80).toString("latin1")}…`;
          if (forged.accept) {
            check(
              outcome.kind === "records" && outcome.records.length === RECORDS.length + 1,
              () => `${what()}: the next record must be read`,
            );
            const extra = (outcome as { records: SegmentRecord[] }).records.at(-1);
            check(
              extra?.type === "message" && Object.getPrototypeOf(extra) === Object.prototype && !("polluted" in {}),
              () => `${what()}: record shape`,
            );
            // It was appended with a valid checksum, so it is a record, not an invention: judge the prefix only.
            judge(
              {
                kind: "records",
                records: (outcome as { records: SegmentRecord[] }).records.slice(0, -1),
                tail: outcome.kind === "records" && outcome.tail,
              },
              RECORDS.length,
              tail !== undefined,
              what,
            );
          } else {
            check(
              outcome.kind === "error" && outcome.error.line === RECORDS.length + 1,
              () => `${what()}: must be SEGMENT_CORRUPT at line ${RECORDS.length + 1}`,
            );
            judge(outcome, RECORDS.length, undefined, what);
          }
          if (run % 10 === 0 && !forged.accept) await viaStore(data, outcome, what);
        }),
        { seed: SEED + 1, numRuns: FORGED_RUNS, endOnFailure: true },
      );
    });
    expect(counts.invented + counts.lostSilently).toBe(0);
    expect(counts.cases).toBe(counts.crash + counts.garbage + counts.flips + counts.forged);
    expect(counts.typedErrors + counts.correct).toBe(counts.cases);
  });
});
