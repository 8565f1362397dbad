import { describe, expect, test } from "vitest";
import { costText, count, usd } from "./run-report.ts";

describe("count", () => {
  test("groups_digits_as_en_us_does", () => {
    const values = [0, 7, 12, 999, 1000, 7445, 10_000, 123_456, 1_000_000, 98_765_432_109, -1234, 2 ** 53 - 1];
    for (const n of values) expect(count(n), String(n)).toBe(n.toLocaleString("en-US"));
  });
});

describe("cost", () => {
  test("usd_shows_enough_digits_to_see_the_amount", () => {
    expect([usd(12.345), usd(0.0201), usd(0.000534), usd(0)]).toEqual(["$12.35", "$0.0201", "$0.000534", "$0.00"]);
  });

  test("a_total_with_an_unknown_price_is_unknown_never_a_smaller_number", () => {
    expect(costText({ calls: 2, costUsd: 0.5, knownCostUsd: 0.5, unpricedCalls: 0 })).toBe("$0.5000");
    expect(costText({ calls: 3, costUsd: undefined, knownCostUsd: 0.5, unpricedCalls: 1 })).toBe(
      "cost unknown ($0.5000 for 2 of 3 calls)",
    );
    expect(costText({ calls: 1, costUsd: undefined, knownCostUsd: 0, unpricedCalls: 1 })).toBe("cost unknown");
  });
});
