import { describe, expect, it } from "vitest";
import { PromptLoaderError } from "./prompt-loader-error.ts";

describe("PromptLoaderError", () => {
  it("keeps_code_location_and_cause", () => {
    const cause = new Error("EACCES");
    const error = new PromptLoaderError("READ_FAILED", "m", { ref: "$user/x", file: "/r/x.md", cause });
    expect([error.name, error.code, error.ref, error.file, error.cause]).toEqual([
      "PromptLoaderError",
      "READ_FAILED",
      "$user/x",
      "/r/x.md",
      cause,
    ]);
    expect(error.index).toBeUndefined();
    expect(error instanceof Error).toBe(true);
  });

  it("is_recognises_the_brand_from_another_copy", () => {
    const foreign = { [Symbol.for("insomnia.prompt-loader.error")]: true, code: "NOT_FOUND" };
    expect(PromptLoaderError.is(foreign)).toBe(true);
    expect(PromptLoaderError.is(new Error("x"))).toBe(false);
    expect(PromptLoaderError.is(null)).toBe(false);
    expect(PromptLoaderError.is(new PromptLoaderError("NOT_FOUND", "x"))).toBe(true);
  });
});
