import { describe, expect, test } from "vitest";
import { parseInvocation } from "./args.ts";
import { CliError } from "./cli-error.ts";

function usageMessage(argv: string[]): string {
  try {
    parseInvocation(argv);
  } catch (error) {
    expect(CliError.is(error)).toBe(true);
    expect((error as CliError).kind).toBe("usage");
    return (error as CliError).message;
  }
  throw new Error(`expected a usage error for ${argv.join(" ")}`);
}

describe("parseInvocation", () => {
  test("prompt_collects_repeatable_flags_in_order", () => {
    expect(
      parseInvocation([
        "prompt",
        "--cwd",
        "w",
        "--manifest=m.yaml",
        "--overlay",
        "a = 1",
        "--overlay",
        "b = 2",
        "--tool",
        "x",
        "--tool",
        "y",
        "--now",
        "2026-01-02T03:04:05Z",
      ]),
    ).toEqual({
      command: "prompt",
      options: {
        cwd: "w",
        manifest: "m.yaml",
        overlays: ["a = 1", "b = 2"],
        tools: ["x", "y"],
        now: new Date("2026-01-02T03:04:05Z"),
        explain: false,
        json: false,
      },
    });
  });

  test("defaults_are_manifest_tools_no_overlays_real_clock", () => {
    expect(parseInvocation(["prompt"])).toEqual({
      command: "prompt",
      options: { overlays: [], explain: false, json: false },
    });
    expect(parseInvocation(["check"])).toEqual({ command: "check", options: { overlays: [], json: false } });
    expect(parseInvocation(["init", "--force"])).toEqual({ command: "init", options: { force: true } });
  });

  test("help_and_version", () => {
    expect(parseInvocation(["--help"])).toEqual({ command: "help" });
    expect(parseInvocation(["-h"])).toEqual({ command: "help" });
    expect(parseInvocation(["--version"])).toEqual({ command: "version" });
    expect(parseInvocation(["prompt", "--help", "--json"])).toEqual({ command: "help", topic: "prompt" });
    expect(parseInvocation(["help", "init"])).toEqual({ command: "help", topic: "init" });
  });

  test("extra_arguments_and_empty_paths_are_usage_errors", () => {
    expect(usageMessage(["--version", "extra"])).toBe("unexpected argument 'extra' (see 'pod --help')");
    expect(usageMessage(["--help", "extra"])).toBe("unexpected argument 'extra' (see 'pod --help')");
    expect(usageMessage(["prompt", "--cwd="])).toBe("--cwd needs a path, got an empty value (see 'pod prompt --help')");
    expect(usageMessage(["check", "--manifest", ""])).toBe(
      "--manifest needs a path, got an empty value (see 'pod check --help')",
    );
    expect(usageMessage(["init", "--cwd", ""])).toBe("--cwd needs a path, got an empty value (see 'pod init --help')");
  });

  test("wrong_usage_is_a_usage_error_naming_the_problem", () => {
    expect(usageMessage([])).toMatch(/missing command/);
    expect(usageMessage(["frobnicate"])).toMatch(/unknown command 'frobnicate'/);
    expect(usageMessage(["prompt", "--bogus"])).toMatch(/--bogus.*pod prompt --help/);
    expect(usageMessage(["prompt", "--cwd"])).toMatch(/--cwd/);
    expect(usageMessage(["prompt", "extra"])).toMatch(/unexpected argument 'extra'/);
    expect(usageMessage(["prompt", "--now", "yesterday"])).toMatch(/--now 'yesterday' is not an RFC 3339/);
    expect(usageMessage(["prompt", "--explain", "--json"])).toMatch(/cannot be combined/);
    expect(usageMessage(["prompt", "--tool", ""])).toMatch(/not a tool name/);
    expect(usageMessage(["init", "--now", "2026-01-02T03:04:05Z"])).toMatch(/--now/);
    expect(usageMessage(["help", "nope"])).toMatch(/unknown command 'nope'/);
  });
});

describe("parseInvocation: run, resume, log", () => {
  test("run_takes_its_message_words_and_every_flag", () => {
    expect(
      parseInvocation([
        "run",
        "--new",
        "--store",
        "logs",
        "--now",
        "2026-01-02T03:04:05Z",
        "--overlay",
        "worker.max_turns = 3",
        "--image",
        "a.png",
        "--image",
        "b.jpg",
        "--reasoning",
        "fix",
        "the",
        "tests",
      ]),
    ).toEqual({
      command: "run",
      options: {
        input: ["fix", "the", "tests"],
        new: true,
        images: ["a.png", "b.jpg"],
        reasoning: true,
        store: "logs",
        now: new Date("2026-01-02T03:04:05Z"),
        overlays: ["worker.max_turns = 3"],
      },
    });
    expect(parseInvocation(["run"])).toEqual({
      command: "run",
      options: { input: [], new: false, images: [], reasoning: false, overlays: [] },
    });
  });

  test("resume_and_log_take_no_words", () => {
    expect(parseInvocation(["log", "--json"])).toEqual({ command: "log", options: { json: true, overlays: [] } });
    expect(parseInvocation(["resume", "--store", "s"])).toEqual({
      command: "resume",
      options: { store: "s", overlays: [] },
    });
    expect(usageMessage(["resume", "now"])).toBe("unexpected argument 'now' (see 'pod resume --help')");
    expect(usageMessage(["log", "--new"])).toMatch(/^Unknown option '--new'/);
  });

  test("an_empty_store_or_bad_now_is_a_usage_error", () => {
    expect(usageMessage(["run", "--store", "", "hi"])).toBe(
      "--store needs a directory or a postgres:// URL, got an empty value (see 'pod run --help')",
    );
    expect(usageMessage(["resume", "--now", "yesterday"])).toMatch(/^--now 'yesterday' is not an RFC 3339 date-time/);
  });
});
