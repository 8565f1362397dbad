import { describe, expect, test } from "vitest";
import { count } from "./run-report.ts";

describe("count", () => {
  test("groups_digits_as_en_us_does", () => {
    const values = [0, 7, 12, 999, 1000, 7445, 10_000, 123_456, 1_000_000, 98_765_432_109, -1234, 2 ** 53 - 1];
    for (const n of values) expect(count(n), String(n)).toBe(n.toLocaleString("en-US"));
  });
});
