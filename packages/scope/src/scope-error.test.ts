import { describe, expect, test } from "vitest";
import { ScopeError } from "./scope-error.ts";

describe("ScopeError", () => {
  test("carries_code_fields_and_cause", () => {
    const cause = new Error("inner");
    const error = new ScopeError("INVALID_RULE", "scope.allow[1]: bad", { cause, rule: "scope.allow[1]" });
    expect(error.name).toBe("ScopeError");
    expect(error.code).toBe("INVALID_RULE");
    expect(error.rule).toBe("scope.allow[1]");
    expect(error.path).toBeUndefined();
    expect(error.cause).toBe(cause);
    expect(error.message).toBe("scope.allow[1]: bad");
    expect(error).toBeInstanceOf(Error);
  });

  test("is_recognizes_the_brand_across_copies", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("insomnia.scope.error")]: true, code: "INVALID_BASE" });
    expect(ScopeError.is(new ScopeError("NO_ALLOW_RULE", "m"))).toBe(true);
    expect(ScopeError.is(foreign)).toBe(true);
    expect(ScopeError.is(new Error("x"))).toBe(false);
    expect(ScopeError.is(null)).toBe(false);
    expect(ScopeError.is("ScopeError")).toBe(false);
  });

  test("cause_is_absent_when_not_given", () => {
    expect("cause" in new ScopeError("INVALID_BASE", "m")).toBe(false);
  });
});
