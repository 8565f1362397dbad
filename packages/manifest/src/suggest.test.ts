import { describe, expect, test } from "vitest";
import { editDistance, suggestKey } from "./suggest.ts";

describe("suggestKey", () => {
  test.each([
    ["instructions", "instruction"],
    ["instuction", "instruction"],
    ["max_tokesn", "max_tokens"],
    ["MAX_TURNS", "max_turns"],
    ["maxTurns", "max_turns"],
    ["api-key-file", "api_key_file"],
  ])("%s_suggests_%s", (key, expected) => {
    expect(suggestKey(key, ["instruction", "max_tokens", "max_turns", "temperature", "api_key_file"])).toBe(expected);
  });

  test("distant_key_gets_no_suggestion", () => {
    expect(suggestKey("colour", ["pod", "worker", "scope", "provider"])).toBeUndefined();
    expect(suggestKey("x", ["pod"])).toBeUndefined();
  });

  test("edit_distance_counts_adjacent_swaps_once", () => {
    expect(editDistance("ab", "ba")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
  });
});
