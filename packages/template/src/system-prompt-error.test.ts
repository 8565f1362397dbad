import { describe, expect, it } from "vitest";
import { SystemPromptError, withProblems } from "./system-prompt-error.ts";

describe("SystemPromptError", () => {
  it("formats_ref_line_column_and_chain_and_sets_the_phase", () => {
    const cause = new Error("inner");
    const error = new SystemPromptError("UNKNOWN_VARIABLE", 'unknown variable "x"', {
      ref: "$user/c",
      file: "/u/c.md",
      line: 3,
      column: 7,
      chain: ["$workspace/a", "$user/c"],
      cause,
    });
    expect([error.name, error.phase, error.code, error.ref, error.file, error.line, error.column, error.cause]).toEqual(
      ["SystemPromptError", "parse", "UNKNOWN_VARIABLE", "$user/c", "/u/c.md", 3, 7, cause],
    );
    expect(error.message).toBe('$user/c:3:7: unknown variable "x"\n  included via $workspace/a -> $user/c');
    expect(new SystemPromptError("OUTPUT_TOO_LARGE", "too big", { ref: "$user/c" }).phase).toBe("render");
    expect(new SystemPromptError("RENDER_FAILED", "boom").message).toBe("boom");
  });

  it("is_recognizes_errors_by_brand_not_by_class", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("insomnia.template.error")]: true });
    expect([
      SystemPromptError.is(new SystemPromptError("SYNTAX", "x")),
      SystemPromptError.is(foreign),
      SystemPromptError.is(new Error("x")),
      SystemPromptError.is(null),
    ]).toEqual([true, true, false, false]);
  });
});

describe("SystemPromptError as data", () => {
  it("an_error_with_several_problems_is_logged_as_json_without_a_cycle", () => {
    const first = new SystemPromptError("UNKNOWN_VARIABLE", 'unknown variable "x"', {
      ref: "$w/a",
      line: 1,
      column: 3,
    });
    const second = new SystemPromptError("UNKNOWN_VARIABLE", 'unknown variable "y"', {
      ref: "$w/a",
      line: 2,
      column: 3,
    });
    withProblems(first, [first, second]);
    const json = JSON.parse(JSON.stringify(first));
    expect(json).toMatchObject({ code: "UNKNOWN_VARIABLE", phase: "parse", ref: "$w/a", line: 1, column: 3 });
    expect(json.problems.map((p: { detail: string }) => p.detail)).toEqual([
      'unknown variable "x"',
      'unknown variable "y"',
    ]);
    expect(structuredClone(first.toJSON())).toEqual(json);
  });
});
