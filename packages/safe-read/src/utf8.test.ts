import { describe, expect, test } from "vitest";
import { DEEP_TESTS } from "../../../test/support/property-runs.ts";
import { firstInvalidUtf8Offset } from "./utf8.ts";

const fatal = new TextDecoder("utf-8", { fatal: true });
const valid = (bytes: Uint8Array) => {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
};

describe("firstInvalidUtf8Offset", () => {
  test("valid_text_has_none", () => {
    expect(firstInvalidUtf8Offset(Buffer.from("ascii, ünï, 中文, 🙂"))).toBeUndefined();
  });
  test("points_at_the_byte_that_starts_the_bad_sequence", () => {
    const cases: [number[], number][] = [
      [[0x61, 0xff], 1],
      [[0x61, 0xc0, 0x80], 1], // overlong
      [[0xe0, 0x80, 0x80], 0], // overlong
      [[0x62, 0xed, 0xa0, 0x80], 1], // surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x61, 0x62, 0xe2, 0x82], 2], // cut short
    ];
    for (const [bytes, offset] of cases) expect(firstInvalidUtf8Offset(Uint8Array.from(bytes))).toBe(offset);
  });
  test("agrees_with_a_fatal_decoder_on_every_two_byte_sequence", () => {
    // Exhaustive on the deep run; the quick run pairs every first byte with the second bytes at the edges of UTF-8's byte ranges.
    const seconds = DEEP_TESTS
      ? Array.from({ length: 256 }, (_, b) => b)
      : [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    for (let a = 0; a < 256; a++)
      for (const b of seconds) {
        const bytes = Uint8Array.from([a, b]);
        expect(firstInvalidUtf8Offset(bytes) === undefined, `${a} ${b}`).toBe(valid(bytes));
      }
  });
});
