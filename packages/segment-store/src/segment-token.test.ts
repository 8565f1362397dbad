import { describe, expect, it } from "vitest";
import { randomToken } from "./segment-token.ts";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("randomToken", () => {
  it("is_a_version_4_uuid_like_the_tokens_of_earlier_versions", () => {
    for (let i = 0; i < 100; i += 1) expect(randomToken()).toMatch(UUID_V4);
  });

  it("never_repeats_across_many_batches", () => {
    const tokens = Array.from({ length: 1000 }, () => randomToken());
    expect(new Set(tokens).size).toBe(1000);
  });
});
