import { describe, expect, test } from "vitest";
import { ManifestError } from "./manifest-error.ts";

describe("ManifestError", () => {
  test("message_is_prefixed_with_file_line_and_column", () => {
    const error = new ManifestError("UNKNOWN_KEY", 'unknown key "x"', { file: "a.yaml", line: 4, column: 3, key: "x" });
    expect(error.message).toBe('a.yaml:4:3: unknown key "x"');
    expect([error.name, error.code, error.detail, error.file, error.line, error.column, error.key]).toEqual([
      "ManifestError",
      "UNKNOWN_KEY",
      'unknown key "x"',
      "a.yaml",
      4,
      3,
      "x",
    ]);
  });

  test("message_without_position_is_the_detail_or_file_prefixed", () => {
    expect(new ManifestError("INVALID_VALUE", "bad").message).toBe("bad");
    expect(new ManifestError("READ_FAILED", "gone", { file: "p.yaml" }).message).toBe("p.yaml: gone");
  });

  test("cause_is_kept", () => {
    const cause = new Error("root");
    expect(new ManifestError("READ_FAILED", "x", { cause }).cause).toBe(cause);
    expect("cause" in new ManifestError("READ_FAILED", "x")).toBe(false);
  });

  test("is_recognizes_the_brand_from_another_copy", () => {
    const foreign = Object.assign(new Error("x"), {
      [Symbol.for("insomnia.manifest.error")]: true,
      code: "UNKNOWN_KEY",
    });
    expect(ManifestError.is(foreign)).toBe(true);
    expect(ManifestError.is(new ManifestError("TOO_LARGE", "x"))).toBe(true);
    expect(ManifestError.is(new Error("x"))).toBe(false);
    expect(ManifestError.is(null)).toBe(false);
    expect(ManifestError.is("ManifestError")).toBe(false);
  });
});
