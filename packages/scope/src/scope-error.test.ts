import { describe, expect, test } from "vitest";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Scope } from "./scope.ts";
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

  test("from_config_locates_a_failing_rule_or_base_where_the_caller_wrote_it", () => {
    const base = mkdtempSync(join(tmpdir(), "scope-locate-"));
    symlinkSync("loop", join(base, "loop"));
    const written: Record<string, { file: string; line: number; column: number }> = {
      "scope.allow[1]": { file: ".insomnia/pod.yaml", line: 7, column: 15 },
      base: { file: "--overlay", line: 1, column: 10 },
    };
    const locate = (setting: string) => written[setting];
    const config = {
      allow: [
        { target: ".", permission: "read" as const },
        { target: "loop/inner", permission: "read" as const },
      ],
    };
    const rule = rejection(() => Scope.fromConfig(config, base, { locate }));
    expect([rule.code, rule.rule, rule.file, rule.line, rule.column]).toEqual([
      "INVALID_RULE",
      "scope.allow[1]",
      ".insomnia/pod.yaml",
      7,
      15,
    ]);
    expect(rule.message).toBe(`.insomnia/pod.yaml:7:15: ${rule.detail}`);
    expect(rule.cause).toBeDefined();
    const looping = join(base, "loop", "inner");
    const atBase = rejection(() => Scope.fromConfig(config, looping, { locate }));
    expect([atBase.code, atBase.path, atBase.file, atBase.line]).toEqual(["INVALID_BASE", looping, "--overlay", 1]);
    // Without a location for the setting, the error is the one compiling the config threw.
    const unlocated = rejection(() => Scope.fromConfig({ allow: [] }, base, { locate }));
    expect([unlocated.code, unlocated.file, unlocated.message]).toEqual(["NO_ALLOW_RULE", undefined, unlocated.detail]);
  });
});

function rejection(make: () => unknown): ScopeError {
  try {
    make();
  } catch (error) {
    if (ScopeError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a ScopeError");
}
