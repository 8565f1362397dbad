import { describe, expect, test } from "vitest";
import { errorText } from "./error-text.ts";

describe("errorText", () => {
  test("reads_a_message_or_the_string_form_and_never_throws", () => {
    expect(errorText(new Error("boom"))).toBe("boom");
    expect(errorText("plain")).toBe("plain");
    expect(errorText(42)).toBe("42");
    expect(errorText({ message: 7 })).toBe("[object Object]");
    const hostile = {
      [Symbol.toPrimitive]: () => {
        throw new Error("no");
      },
    };
    expect(errorText(hostile)).toBe("unprintable error");
  });
});
