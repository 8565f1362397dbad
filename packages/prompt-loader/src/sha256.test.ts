import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JS_SHA256_MAX_BYTES, nativeSha256Hex, sha256Hex, sha256HexOfBytes } from "./sha256.ts";

const oracle = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

describe("sha256", () => {
  it("gives_the_fips_180_examples", () => {
    const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);
    expect(sha256HexOfBytes(ascii(""))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256HexOfBytes(ascii("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256HexOfBytes(ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    expect(sha256HexOfBytes(new Uint8Array(1_000_000).fill(0x61))).toBe(
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
    );
  });

  it("javascript_and_node_crypto_agree_at_every_padding_edge", () => {
    // 55, 56, 63, 64 and 119, 120 bytes are where the length and the 0x80 spill into a new block.
    for (let length = 0; length <= 300; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 131 + length) & 0xff);
      expect(sha256HexOfBytes(bytes)).toBe(oracle(bytes));
      expect(nativeSha256Hex(bytes)).toBe(oracle(bytes));
    }
  });

  it("javascript_and_node_crypto_agree_on_any_bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), (bytes) => {
        expect(sha256HexOfBytes(bytes)).toBe(oracle(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it("hashes_the_utf8_of_a_text_short_or_long", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 2 * JS_SHA256_MAX_BYTES }), (text) => {
        expect(sha256Hex(text)).toBe(oracle(Buffer.from(text, "utf8")));
      }),
      { numRuns: 500 },
    );
    // Either side of the limit: the JavaScript path, then node:crypto's.
    for (const length of [JS_SHA256_MAX_BYTES - 1, JS_SHA256_MAX_BYTES, JS_SHA256_MAX_BYTES + 1]) {
      const text = "é".repeat(Math.floor(length / 2)) + (length % 2 === 1 ? "x" : "");
      expect(Buffer.byteLength(text)).toBe(length);
      expect(sha256Hex(text)).toBe(oracle(Buffer.from(text, "utf8")));
    }
    // A lone surrogate is hashed as U+FFFD, as node:crypto's update(text, "utf8") does.
    expect(sha256Hex("a\ud800b")).toBe(createHash("sha256").update("a\ud800b", "utf8").digest("hex"));
  });
});
