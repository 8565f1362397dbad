import fc from "fast-check";
import { firstInvalidUtf8Offset } from "@insomnia/safe-read";
import { describe, expect, it } from "vitest";
import { decodePromptText, normalizeText, promptFileSha256 } from "./decode-prompt-text.ts";
import { sha256Hex } from "./sha256.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

describe("decodePromptText", () => {
  it("strips_one_bom_and_normalizes_line_endings", () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("a\r\nb\rc\n\r\n")]);
    expect(decodePromptText(bytes)).toEqual({ ok: true, text: "a\nb\nc\n\n" });
    expect(normalizeText("\ufeff\ufeffx")).toBe("\ufeffx");
  });

  it("reports_the_offset_of_the_first_bad_byte", () => {
    const result = decodePromptText(new Uint8Array([0x61, 0x62, 0xff, 0x63]));
    expect(result.ok).toBe(false);
    expect(result.ok ? -1 : result.byteOffset).toBe(2);
    expect(firstInvalidUtf8Offset(new Uint8Array([0xc0, 0xae]))).toBe(0); // overlong "."
    expect(firstInvalidUtf8Offset(new Uint8Array([0x41, 0xed, 0xa0, 0x80]))).toBe(1); // surrogate
    expect(firstInvalidUtf8Offset(new Uint8Array([0x41, 0xe2, 0x82]))).toBe(1); // truncated
    expect(firstInvalidUtf8Offset(new TextEncoder().encode("ok é 😀"))).toBeUndefined();
  });

  it("offset_finder_agrees_with_the_fatal_decoder", () => {
    const decoder = new TextDecoder("utf-8", { fatal: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => {
        let valid = true;
        try {
          decoder.decode(bytes);
        } catch {
          valid = false;
        }
        expect(firstInvalidUtf8Offset(bytes) === undefined).toBe(valid);
      }),
      { numRuns: propertyRuns(500, 10_000) },
    );
  });

  it("sha256_is_hex_of_the_utf8_bytes", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("é")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a_file_s_hash_is_that_of_its_loaded_text_and_none_when_it_is_not_utf8", () => {
    expect(promptFileSha256(Buffer.from("\ufeffone\r\ntwo\rthree", "utf8"))).toBe(sha256Hex("one\ntwo\nthree"));
    expect(promptFileSha256(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))).toBeUndefined();
  });
});
