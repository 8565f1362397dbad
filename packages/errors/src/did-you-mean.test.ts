import { describe, expect, test } from "vitest";
import { didYouMean, didYouMeanSuffix, editDistance } from "./did-you-mean.ts";

describe("didYouMean", () => {
  test.each([
    ["instructions", "instruction"],
    ["instuction", "instruction"],
    ["max_tokesn", "max_tokens"],
    ["MAX_TURNS", "max_turns"],
    ["maxTurns", "max_turns"],
    ["api-key-file", "api_key_file"],
  ])("%s_suggests_%s", (key, expected) => {
    expect(didYouMean(key, ["instruction", "max_tokens", "max_turns", "temperature", "api_key_file"])).toBe(expected);
  });

  test("distant_key_gets_no_suggestion", () => {
    expect(didYouMean("colour", ["pod", "worker", "scope", "provider"])).toBeUndefined();
    expect(didYouMean("x", ["pod"])).toBeUndefined();
  });

  test("matches_case_camel_and_kebab_forms_at_once", () => {
    expect(didYouMean("maxTokens", ["max_tokens", "max_turns"])).toBe("max_tokens");
    expect(didYouMean("Max-Turns", ["max_tokens", "max_turns"])).toBe("max_turns");
  });

  test("suggests_the_closest_within_a_third_of_its_length", () => {
    expect(didYouMean("instructions", ["instruction", "tools"])).toBe("instruction");
    expect(didYouMean("dat", ["date", "time"])).toBe("date");
    expect(didYouMean("readble", ["scope.readable", "scope.writable"])).toBe("scope.readable");
    expect(didYouMean("completely", ["date", "time"])).toBeUndefined();
    expect(didYouMean("max_turns", ["max_tokens", "max_turns"])).toBe("max_turns");
    expect(didYouMeanSuffix("tols", ["tools"])).toBe(' (did you mean "tools"?)');
    expect(didYouMeanSuffix("zzzz", ["tools"])).toBe("");
  });

  test("edit_distance_counts_adjacent_swaps_as_one_and_caps_long_words", () => {
    expect(editDistance("ab", "ba")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("x".repeat(100_000), "y")).toBe(100_000);
  });
});
