import { describe, expect, test } from "vitest";
import { formatErrorMessage, hasBrand, InsomniaError, setProblems } from "./insomnia-error.ts";

type SampleCode = "BAD" | "WORSE";

class SampleError extends InsomniaError<SampleCode> {
  static readonly brand = Symbol.for("insomnia.sample.error");
  override readonly name = "SampleError";
  declare readonly key?: string;

  constructor(
    code: SampleCode,
    detail: string,
    options: ConstructorParameters<typeof InsomniaError>[2] & { key?: string } = {},
  ) {
    super(code, detail, options);
    if (options.key !== undefined) this.key = options.key;
  }

  static is(value: unknown): value is SampleError {
    return hasBrand(value, SampleError.brand);
  }
}

describe("InsomniaError", () => {
  test("message_is_the_location_then_the_detail", () => {
    const error = new SampleError("BAD", 'unknown key "x"', { file: "a.yaml", line: 4, column: 3 });
    expect(error.message).toBe('a.yaml:4:3: unknown key "x"');
    expect([error.name, error.code, error.detail, error.file, error.line, error.column]).toEqual([
      "SampleError",
      "BAD",
      'unknown key "x"',
      "a.yaml",
      4,
      3,
    ]);
    expect(new SampleError("BAD", "plain").message).toBe("plain");
    expect(new SampleError("BAD", "d", { ref: "$user/a", file: "/home/u/a.md", line: 2 }).message).toBe("$user/a:2: d");
    expect(new SampleError("BAD", "d", { line: 2, column: 9 }).message).toBe("2:9: d");
    expect(formatErrorMessage("d", { ref: "$w/a", messageSuffix: "\n  via x" })).toBe("$w/a: d\n  via x");
  });

  test("absent_fields_are_absent_and_cause_is_kept", () => {
    const plain = new SampleError("BAD", "x");
    expect(["cause" in plain, "file" in plain, "line" in plain]).toEqual([false, false, false]);
    const cause = new Error("root");
    expect(new SampleError("BAD", "x", { cause }).cause).toBe(cause);
  });

  test("is_recognizes_the_class_brand_across_copies_and_the_base_brand", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("insomnia.sample.error")]: true });
    expect(SampleError.is(new SampleError("BAD", "x"))).toBe(true);
    expect(SampleError.is(foreign)).toBe(true);
    expect(SampleError.is(new Error("x"))).toBe(false);
    expect(SampleError.is(null)).toBe(false);
    expect(InsomniaError.isInsomniaError(new SampleError("BAD", "x"))).toBe(true);
    expect(InsomniaError.isInsomniaError(foreign)).toBe(false);
    expect(new SampleError("BAD", "x")).toBeInstanceOf(Error);
  });

  test("an_error_with_several_problems_survives_json_stringify_and_structured_clone_of_its_json", () => {
    const first = new SampleError("BAD", "first", { file: "a", line: 1, key: "k", cause: new Error("root") });
    const second = new SampleError("WORSE", "second", { file: "a", line: 2 });
    setProblems(first, [first, second]);
    expect(first.problems).toEqual([first, second]);
    const json = JSON.parse(JSON.stringify(first));
    expect(json).toEqual({
      name: "SampleError",
      message: "a:1: first",
      code: "BAD",
      detail: "first",
      file: "a",
      line: 1,
      key: "k",
      cause: { name: "Error", message: "root" },
      problems: [
        {
          name: "SampleError",
          message: "a:1: first",
          code: "BAD",
          detail: "first",
          file: "a",
          line: 1,
          key: "k",
          cause: { name: "Error", message: "root" },
        },
        { name: "SampleError", message: "a:2: second", code: "WORSE", detail: "second", file: "a", line: 2 },
      ],
    });
    expect(structuredClone(first.toJSON())).toEqual(json);
    // A logger that walks own enumerable keys never meets the self-reference in `problems`.
    expect(Object.keys(first)).not.toContain("problems");
  });

  test("an_error_standing_for_another_reports_that_errors_problems", () => {
    const inner = new SampleError("BAD", "unclosed", { ref: "$workspace/a", line: 2 });
    const other = new SampleError("WORSE", "unknown variable", { ref: "$workspace/a", line: 5 });
    setProblems(inner, [inner, other]);
    const outer = new SampleError("WORSE", inner.detail, { cause: inner, problems: inner.problems });
    expect(outer.problems).toEqual([inner, other]);
    expect(Object.isFrozen(outer.problems)).toBe(true);
    expect(new SampleError("BAD", "alone", { problems: [] }).problems).toHaveLength(1);
  });

  test("to_json_cuts_cycles_in_causes_and_fields", () => {
    const a = new SampleError("BAD", "a");
    const b = new SampleError("BAD", "b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    const json = a.toJSON();
    expect(json.cause).toEqual({
      name: "SampleError",
      message: "b",
      code: "BAD",
      detail: "b",
      cause: { name: "SampleError", message: "a" },
    });
    expect(() => JSON.stringify(a)).not.toThrow();
    const hostile = new SampleError("BAD", "h", {
      cause: {
        get message(): string {
          throw new Error("no");
        },
      },
    });
    expect(hostile.toJSON().cause).toEqual({ name: "Error", message: "unprintable error" });
    expect(new SampleError("BAD", "p", { cause: 42 }).toJSON().cause).toBe("42");
  });
});
