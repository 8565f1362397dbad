import { ManifestError } from "@insomnia/manifest";
import { PodError, SegmentStoreError } from "@insomnia/pod";
import { PromptLoaderError } from "@insomnia/prompt-loader";
import { SystemPromptError } from "@insomnia/template";
import { describe, expect, test } from "vitest";
import { CliError } from "./cli-error.ts";
import { classifyError, problemsOf } from "./errors.ts";

describe("classifyError", () => {
  test("manifest_error_is_the_users_with_its_position_and_no_repeated_location", () => {
    const error = new ManifestError("UNKNOWN_KEY", 'unknown key "instructions" in worker', {
      file: ".insomnia/pod.yaml",
      line: 4,
      column: 3,
    });
    expect(classifyError(error)).toEqual({
      kind: "user",
      problem: {
        file: ".insomnia/pod.yaml",
        line: 4,
        column: 3,
        code: "UNKNOWN_KEY",
        message: 'unknown key "instructions" in worker',
        severity: "error",
      },
    });
  });

  test("template_and_loader_errors_are_the_users", () => {
    const template = new SystemPromptError("UNKNOWN_VARIABLE", "unknown variable typo", {
      ref: "$workspace/a",
      file: "/w/a.md",
      line: 2,
      column: 5,
    });
    expect(classifyError(template)).toEqual({
      kind: "user",
      problem: {
        file: "/w/a.md",
        line: 2,
        column: 5,
        code: "UNKNOWN_VARIABLE",
        message: "unknown variable typo",
        severity: "error",
      },
    });
    const loader = new PromptLoaderError("NOT_FOUND", "no such prompt: /w/x.md", {
      ref: "$workspace/x",
      file: "/w/x.md",
    });
    expect(classifyError(loader)).toEqual({
      kind: "user",
      problem: { file: "/w/x.md", code: "NOT_FOUND", message: "no such prompt: /w/x.md", severity: "error" },
    });
  });

  test("pod_error_of_user_kind_is_the_users_and_api_misuse_is_a_bug", () => {
    expect(classifyError(new SegmentStoreError("SEGMENT_LOCKED", "locked", { file: "/s/1.jsonl" })).kind).toBe("user");
    expect(classifyError(new PodError("INVALID_SCOPE", "bad rule")).kind).toBe("user");
    expect(classifyError(new PodError("NOT_MATERIALIZED", "call run() first")).kind).toBe("internal");
  });

  test("file_system_errors_about_a_path_are_the_users", () => {
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/nope'"), {
      code: "ENOENT",
      syscall: "open",
      path: "/nope",
      errno: -2,
    });
    expect(classifyError(enoent)).toEqual({
      kind: "user",
      problem: {
        file: "/nope",
        code: "ENOENT",
        message: "ENOENT: no such file or directory, open '/nope'",
        severity: "error",
      },
    });
  });

  test("cli_errors_keep_their_kind", () => {
    expect(classifyError(new CliError("USAGE", "unknown flag")).kind).toBe("usage");
    expect(classifyError(new CliError("FILE_EXISTS", "exists", { file: "/w/x" }))).toEqual({
      kind: "user",
      problem: { file: "/w/x", code: "FILE_EXISTS", message: "exists", severity: "error" },
    });
  });

  test("anything_else_is_internal", () => {
    expect(classifyError(new TypeError("cannot read properties of undefined")).kind).toBe("internal");
    expect(classifyError(Object.assign(new Error("boom"), { code: "ENOENT" })).kind).toBe("internal");
    expect(classifyError("a string").kind).toBe("internal");
    expect(classifyError(undefined).kind).toBe("internal");
  });

  test("include_failed_carries_the_loader_code_as_cause", () => {
    const loader = new PromptLoaderError("NOT_FOUND", "$workspace/x: no file at /w/x.md", {
      ref: "$workspace/x",
      file: "/w/x.md",
    });
    const include = new SystemPromptError("INCLUDE_FAILED", "cannot load include: $workspace/x: no file at /w/x.md", {
      ref: "$workspace/main",
      file: "/w/main.md",
      line: 1,
      column: 4,
      cause: loader,
    });
    expect(classifyError(include)).toEqual({
      kind: "user",
      problem: {
        file: "/w/main.md",
        line: 1,
        column: 4,
        code: "INCLUDE_FAILED",
        cause: "NOT_FOUND",
        message: "cannot load include: $workspace/x: no file at /w/x.md",
        severity: "error",
      },
    });
    const syntax = new SystemPromptError("SYNTAX", "bad", { ref: "$workspace/main", line: 1, cause: loader });
    const other = classifyError(syntax);
    expect(other.kind === "user" ? other.problem : undefined).toEqual({
      code: "SYNTAX",
      file: "$workspace/main",
      line: 1,
      message: "bad",
      severity: "error",
    });
  });
});

describe("an error that stands for another's failure", () => {
  // The library decides what an error reports (its `problems`); the CLI knows no package that wraps another.
  const first = new SystemPromptError("SYNTAX", "unclosed", { ref: "$workspace/main", file: "/w/main.md", line: 1 });
  const second = new SystemPromptError("UNKNOWN_VARIABLE", "unknown variable", {
    ref: "$workspace/main",
    file: "/w/main.md",
    line: 3,
  });
  Object.defineProperty(first, "problems", { value: [first, second] });
  const wrapped = new PodError("INVALID_SYSTEM_PROMPT_TEMPLATE", first.detail, {
    cause: first,
    problems: first.problems,
  });

  test("is_reported_as_its_first_problem_from_that_problems_own_fields", () => {
    expect(classifyError(wrapped)).toEqual({
      kind: "user",
      problem: { file: "/w/main.md", line: 1, code: "SYNTAX", message: "unclosed", severity: "error" },
    });
  });

  test("problems_of_it_list_every_problem_it_reports", () => {
    const classified = classifyError(wrapped);
    if (classified.kind !== "user") throw new Error("expected a user error");
    expect(problemsOf(wrapped, classified.problem).map((problem) => [problem.code, problem.line])).toEqual([
      ["SYNTAX", 1],
      ["UNKNOWN_VARIABLE", 3],
    ]);
  });

  test("of_an_internal_kind_stays_a_bug_whatever_it_reports", () => {
    const misuse = new PodError("NOT_MATERIALIZED", "call run() first", { problems: [first] });
    expect(classifyError(misuse).kind).toBe("internal");
  });
});
