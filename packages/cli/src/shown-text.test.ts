import { describe, expect, test } from "vitest";
import { formatProblemLine } from "./output.ts";
import { activityLines } from "./run-report.ts";
import { forTerminal, hideSecret, redacted, visibleControls } from "./shown-text.ts";

const plain = {
  enabled: false,
  red: (t: string) => t,
  yellow: (t: string) => t,
  bold: (t: string) => t,
  dim: (t: string) => t,
};

describe("control characters", () => {
  test("c0_and_c1_controls_become_visible_escapes_and_the_text_around_them_stays", () => {
    expect(visibleControls("a\u001b[31mred\u0007\u0000b\u009bc\u007f")).toBe("a\\x1b[31mred\\x07\\x00b\\x9bc\\x7f");
    expect(visibleControls("tabs\tand\nlines stay")).toBe("tabs\tand\nlines stay");
    expect(visibleControls("carriage\rreturn")).toBe("carriage\\x0dreturn");
    expect(visibleControls("é ü — 日本")).toBe("é ü — 日本");
  });

  test("only_a_terminal_gets_escapes_a_pipe_gets_the_bytes", () => {
    expect(forTerminal({ write: () => true, isTTY: true }, "x\u001by")).toBe("x\\x1by");
    expect(forTerminal({ write: () => true }, "x\u001by")).toBe("x\u001by");
  });

  test("tool_names_inputs_and_problem_messages_from_a_model_or_checkout_are_escaped", () => {
    const [line] = activityLines(
      { role: "assistant", content: "", toolCalls: [{ id: "1", name: "x\u001b]0;t\u0007", input: { p: "\u009b" } }] },
      plain,
    );
    expect(line).toBe('pod: tool x\\x1b]0;t\\x07 {"p":"\\x9b"}\n');
    expect(formatProblemLine({ code: "C", message: "path /a\u001b[2Jb", file: "f\u001bg" }, plain)).toBe(
      "f\\x1bg: C: path /a\\x1b[2Jb",
    );
  });
});

describe("secrets in what pod shows", () => {
  test("a_registered_key_and_database_passwords_are_redacted_in_every_problem_line", () => {
    hideSecret("sk-test-shown-text-1234");
    expect(redacted("echo: sk-test-shown-text-1234")).toBe("echo: ***");
    expect(
      formatProblemLine(
        { code: "NO_CONVERSATION", message: "no conversation in postgres://u:p@ss@h/db?password=x; start one" },
        plain,
      ),
    ).toBe("NO_CONVERSATION: no conversation in postgres://***@h/db?password=***; start one");
  });
});
