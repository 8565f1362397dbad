import { crc32 } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crc32Update } from "./segment-crc32.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

const bytes = (text: string): Buffer => Buffer.from(text, "utf8");
const whole = (data: Uint8Array): number => crc32Update(0, data, 0, data.length);

describe("crc32Update", () => {
  it("matches_the_published_crc32_check_values", () => {
    // CRC-32/ISO-HDLC: check value of "123456789" is cbf43926.
    expect(whole(bytes("123456789"))).toBe(0xcbf43926);
    expect(whole(bytes(""))).toBe(0);
    expect(whole(bytes("a"))).toBe(0xe8b7be43);
    expect(whole(bytes("abc"))).toBe(0x352441c2);
    expect(whole(bytes("The quick brown fox jumps over the lazy dog"))).toBe(0x414fa339);
    expect(whole(Buffer.alloc(32))).toBe(0x190a55ad);
    expect(whole(Buffer.alloc(32, 0xff))).toBe(0xff6cab0b);
  });

  it("equals_zlib_crc32_over_any_range_of_any_bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (data, a, b) => {
        const start = data.length === 0 ? 0 : a % (data.length + 1);
        const end = start + (b % (data.length - start + 1));
        expect(crc32Update(0, data, start, end)).toBe(crc32(data.subarray(start, end)));
      }),
      { numRuns: propertyRuns(200, 2_000) },
    );
  });

  it("continues_from_a_previous_value_as_zlib_does", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.uint8Array({ maxLength: 100 }), (head, tail) => {
        const joined = Buffer.concat([head, tail]);
        const continued = crc32Update(whole(head), tail, 0, tail.length);
        expect(continued).toBe(crc32(joined));
        expect(continued).toBe(crc32(tail, crc32(head)));
      }),
    );
  });

  it("reads_only_the_given_range", () => {
    const data = bytes("xx123456789yy");
    expect(crc32Update(0, data, 2, 11)).toBe(0xcbf43926);
    expect(crc32Update(0, data, 5, 5)).toBe(0);
  });
});
