import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseRfc3339 } from "./rfc3339.ts";

describe("parseRfc3339", () => {
  test("accepts_utc_and_offsets", () => {
    expect(parseRfc3339("2026-01-02T03:04:05Z")?.toISOString()).toBe("2026-01-02T03:04:05.000Z");
    expect(parseRfc3339("2026-01-02T03:04:05.250Z")?.toISOString()).toBe("2026-01-02T03:04:05.250Z");
    expect(parseRfc3339("2026-01-02T05:04:05+02:00")?.toISOString()).toBe("2026-01-02T03:04:05.000Z");
    expect(parseRfc3339("2026-01-02t03:04:05z")?.toISOString()).toBe("2026-01-02T03:04:05.000Z");
  });

  test("rejects_what_is_not_a_full_rfc3339_date_time", () => {
    for (const bad of [
      "",
      "now",
      "2026-01-02",
      "2026-01-02T03:04Z",
      "2026-01-02T03:04:05",
      "2026-13-01T00:00:00Z",
      "2026-02-30T00:00:00Z",
      "2026-01-02T24:00:00Z",
      "2026-01-02T03:60:00Z",
      "2026-01-02T03:04:05+24:00",
      " 2026-01-02T03:04:05Z",
      "1767323045",
    ]) {
      expect(parseRfc3339(bad), bad).toBeUndefined();
    }
  });

  test("round_trips_every_instant_printed_as_iso", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (date) => {
          expect(parseRfc3339(date.toISOString())?.getTime()).toBe(date.getTime());
        },
      ),
    );
  });
});
