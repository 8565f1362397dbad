import { describe, expect, test } from "vitest";
import { colourEnabled, formatLocation, formatProblemLine, styleFor } from "./output.ts";

const tty = { write: () => true, isTTY: true };
const pipe = { write: () => true };

describe("colour", () => {
  test("colour_only_on_a_terminal", () => {
    expect(colourEnabled(tty, {})).toBe(true);
    expect(colourEnabled(pipe, {})).toBe(false);
  });

  test("no_color_with_any_non_empty_value_wins", () => {
    expect(colourEnabled(tty, { NO_COLOR: "1" })).toBe(false);
    expect(colourEnabled(tty, { NO_COLOR: "false" })).toBe(false);
    expect(colourEnabled(tty, { NO_COLOR: "" })).toBe(true);
    expect(colourEnabled(pipe, { NO_COLOR: "1", FORCE_COLOR: "1" })).toBe(false);
  });

  test("force_color_turns_colour_on_for_a_pipe_unless_zero", () => {
    expect(colourEnabled(pipe, { FORCE_COLOR: "1" })).toBe(true);
    expect(colourEnabled(tty, { FORCE_COLOR: "0" })).toBe(false);
  });

  test("problem_line_has_red_code_only_when_coloured", () => {
    const problem = { file: "a.yaml", line: 3, column: 7, code: "UNKNOWN_KEY", message: "nope" };
    expect(formatProblemLine(problem, styleFor(pipe, {}))).toBe("a.yaml:3:7: UNKNOWN_KEY: nope");
    expect(formatProblemLine(problem, styleFor(tty, {}))).toBe("a.yaml:3:7: \u001b[31mUNKNOWN_KEY\u001b[39m: nope");
    expect(formatProblemLine({ ...problem, severity: "warning" }, styleFor(pipe, {}))).toBe(
      "a.yaml:3:7: warning: UNKNOWN_KEY: nope",
    );
  });

  test("problem_line_shows_the_cause_code_before_the_message", () => {
    const problem = {
      file: "a.md",
      line: 1,
      column: 4,
      code: "INCLUDE_FAILED",
      cause: "NOT_FOUND",
      message: "cannot load include",
    };
    expect(formatProblemLine(problem, styleFor(pipe, {}))).toBe(
      "a.md:1:4: INCLUDE_FAILED: [NOT_FOUND] cannot load include",
    );
  });

  test("location_leaves_out_unknown_parts", () => {
    expect(formatLocation({ file: "f", line: 2 })).toBe("f:2");
    expect(formatLocation({ file: "f", column: 2 })).toBe("f");
    expect(formatLocation({ line: 2 })).toBeUndefined();
  });
});
