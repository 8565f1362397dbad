import { crc32 } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SegmentStoreError } from "./segment-store-error.ts";
import { encodeSegmentLine, scanSegment, serializeSegmentRecord } from "./segment-codec.ts";
import type { SegmentRecord, SegmentStartRecord } from "./segment-record.ts";

const FILE = "/logs/seg-0000000001.jsonl";

const start: SegmentStartRecord = {
  type: "segment_start",
  systemPrompt: "prompt ✓\nsecond line",
  sources: [{ ref: "$workspace/a", file: "/w/.insomnia/prompts/a.md", sha256: "00".repeat(32) }],
  createdAt: "2025-01-02T03:04:05Z",
};

function message(n: number): SegmentRecord {
  return { type: "message", message: { n, text: `テキスト ${n} 🙂\n"}\\n{` } };
}

function encodeLog(records: readonly SegmentRecord[]): { data: Buffer; lineStarts: number[] } {
  const lines = records.map((record, seq) => encodeSegmentLine(seq, JSON.stringify(record)));
  const lineStarts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    lineStarts.push(offset);
    offset += line.length;
  }
  return { data: Buffer.concat(lines), lineStarts };
}

function scanError(data: Buffer): SegmentStoreError {
  try {
    scanSegment(data, FILE);
  } catch (error) {
    if (SegmentStoreError.is(error)) return error;
    throw error;
  }
  throw new Error("expected scanSegment to throw");
}

describe("segment line format", () => {
  it("line_is_json_with_seq_crc_record_and_crc_covers_exact_bytes", () => {
    const json = serializeSegmentRecord(message(1), "seg-test", "message");
    const line = encodeSegmentLine(7, json).toString("utf8");
    const crc = crc32(Buffer.from(`{"seq":7,"record":${json}}`, "utf8"))
      .toString(16)
      .padStart(8, "0");
    expect(line).toBe(`{"seq":7,"crc":"${crc}","record":${json}}\n`);
    expect(JSON.parse(line)).toEqual({ seq: 7, crc, record: message(1) });
    expect(line.indexOf("\n")).toBe(line.length - 1);
  });

  it("round_trips_any_json_message", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 8 }), (messages) => {
        const records: SegmentRecord[] = [start, ...messages.map((m) => ({ type: "message" as const, message: m }))];
        const expected = records.map((record) => JSON.parse(JSON.stringify(record)) as unknown);
        const { data } = encodeLog(records);
        const scan = scanSegment(data, FILE);
        expect(scan.records).toEqual(expected);
        expect(scan.validLength).toBe(data.length);
        expect(scan.tailReason).toBeUndefined();
      }),
    );
  });
});

describe("scanSegment", () => {
  it("empty_file_has_no_start_record", () => {
    const error = scanError(Buffer.alloc(0));
    expect(error.code).toBe("SEGMENT_CORRUPT");
    expect(error.file).toBe(FILE);
    expect(error.line).toBe(1);
    expect(error.message).toMatch(/no start record/);
  });

  it("torn_first_record_has_no_start_record", () => {
    const { data } = encodeLog([start]);
    const error = scanError(data.subarray(0, data.length - 1));
    expect(error.code).toBe("SEGMENT_CORRUPT");
    expect(error.message).toMatch(/no start record/);
  });

  it("first_record_must_be_segment_start", () => {
    const { data } = encodeLog([message(0), message(1)]);
    const error = scanError(data);
    expect(error.code).toBe("SEGMENT_CORRUPT");
    expect(error.line).toBe(1);
  });

  it("second_segment_start_is_corrupt", () => {
    const { data } = encodeLog([start, message(0), start, message(1)]);
    const error = scanError(data);
    expect(error.code).toBe("SEGMENT_CORRUPT");
    expect(error.line).toBe(3);
    expect(error.message).toMatch(/second "segment_start"/);
  });

  it("skipped_or_repeated_seq_is_corrupt_even_at_the_end", () => {
    const json = serializeSegmentRecord(message(1), "seg-test", "message");
    const { data } = encodeLog([start, message(0)]);
    for (const seq of [1, 3, 0]) {
      const error = scanError(Buffer.concat([data, encodeSegmentLine(seq, json)]));
      expect(error.code).toBe("SEGMENT_CORRUPT");
      expect(error.line).toBe(3);
      expect(error.message).toMatch(new RegExp(`seq ${seq}, expected 2`));
    }
  });

  it("checksummed_non_record_is_corrupt_even_at_the_end", () => {
    const { data } = encodeLog([start]);
    for (const body of ['{"type":"note"}', "[1,2]", "{oops"]) {
      const error = scanError(Buffer.concat([data, encodeSegmentLine(1, body)]));
      expect(error.code).toBe("SEGMENT_CORRUPT");
      expect(error.line).toBe(2);
    }
  });

  it("bad_line_followed_by_a_record_is_corrupt_at_the_bad_line", () => {
    const { data, lineStarts } = encodeLog([start, message(0), message(1), message(2)]);
    const damaged = Buffer.from(data);
    const at = (lineStarts[2] ?? 0) + 60;
    damaged[at] = (damaged[at] ?? 0) ^ 0x01;
    const error = scanError(damaged);
    expect(error.code).toBe("SEGMENT_CORRUPT");
    expect(error.line).toBe(3);
    expect(error.message).toMatch(/checksum mismatch, yet a whole record follows at line 4/);
  });

  it("flipped_newline_before_the_last_record_is_corrupt_not_a_torn_tail", () => {
    const records = [start, message(0), message(1), message(2)];
    const { data, lineStarts } = encodeLog(records);
    const newline = (lineStarts[3] ?? 0) - 1;
    for (const replacement of [0x0b, 0x00, 0x20, 0x8a]) {
      const damaged = Buffer.from(data);
      damaged[newline] = replacement;
      const error = scanError(damaged);
      expect(error.code).toBe("SEGMENT_CORRUPT");
      expect(error.line).toBe(3);
      expect(error.message).toMatch(/yet a whole record follows inside line 3/);
    }
  });

  it("complete_line_without_newline_is_a_torn_tail", () => {
    const { data, lineStarts } = encodeLog([start, message(0), message(1)]);
    const scan = scanSegment(data.subarray(0, data.length - 1), FILE);
    expect(scan.records).toEqual([start, message(0)]);
    expect(scan.validLength).toBe(lineStarts[2]);
    expect(scan.tailReason).toMatch(/no newline/);
  });

  it("garbage_lines_at_the_end_are_a_torn_tail", () => {
    const { data } = encodeLog([start, message(0)]);
    const scan = scanSegment(
      Buffer.concat([data, Buffer.from('\n\nnot a record\n{"seq":2,'), data.subarray(0, 10)]),
      FILE,
    );
    expect(scan.records).toEqual([start, message(0)]);
    expect(scan.validLength).toBe(data.length);
    expect(scan.tailReason).toBe("the line is not a framed record");
  });

  it("every_single_bit_flip_is_detected", () => {
    const records = [start, ...Array.from({ length: 9 }, (_, n) => message(n))];
    const { data, lineStarts } = encodeLog(records);
    const lastStart = lineStarts[lineStarts.length - 1] ?? 0;
    let corrupt = 0;
    let recovered = 0;
    for (let offset = 0; offset < data.length; offset += 1) {
      for (let bit = 0; bit < 8; bit += 1) {
        const flipped = Buffer.from(data);
        flipped[offset] = (flipped[offset] ?? 0) ^ (1 << bit);
        if (offset < lastStart) {
          // Also the newline joining the last line to the one before: damage followed by a whole record.
          expect(scanError(flipped).code).toBe("SEGMENT_CORRUPT");
          corrupt += 1;
        } else {
          // The last line: a torn tail.
          const kept = records.length - 1;
          const scan = scanSegment(flipped, FILE);
          expect(scan.records).toEqual(records.slice(0, kept));
          expect(scan.tailReason).toMatch(
            /^(the line is not a framed record|the record is cut short|checksum mismatch|the last line has no newline \(an append that did not finish\))$/,
          );
          recovered += 1;
        }
      }
    }
    expect(corrupt + recovered).toBe(data.length * 8);
    expect(recovered).toBe((data.length - lastStart) * 8);
  });
});
