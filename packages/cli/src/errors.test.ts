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

  test("pod_error_wrapping_a_template_error_reports_the_template_error", () => {
    const inner = new SystemPromptError("SYNTAX", "unclosed {{#if}}", {
      ref: "$workspace/a",
      file: "/w/a.md",
      line: 7,
      column: 1,
    });
    const outer = new PodError("INVALID_SYSTEM_PROMPT_TEMPLATE", `${inner.message}`, {
      cause: inner,
      ref: "$workspace/a",
      file: "/w/a.md",
      line: 7,
      column: 1,
    });
    expect(classifyError(outer)).toEqual({
      kind: "user",
      problem: { file: "/w/a.md", line: 7, column: 1, code: "SYNTAX", message: "unclosed {{#if}}", severity: "error" },
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

describe("a pod error about a manifest value", () => {
  const origin = { file: ".insomnia/pod.yaml", line: 2, column: 16 };
  const rootFailure = (at?: typeof origin) => {
    const loader = new PromptLoaderError("UNKNOWN_PREFIX", 'unknown prefix "$foo"', { ref: "$foo/x", index: 0 });
    const inner = new SystemPromptError("INCLUDE_FAILED", 'cannot load instruction "$foo/x": unknown prefix "$foo"', {
      ref: "$foo/x",
      cause: loader,
    });
    return new PodError("INVALID_SYSTEM_PROMPT_TEMPLATE", inner.message, { cause: inner, ref: "$foo/x", origin: at });
  };

  test("is_reported_at_the_origin_it_carries_with_the_inner_code", () => {
    expect(classifyError(rootFailure(origin))).toEqual({
      kind: "user",
      problem: {
        file: ".insomnia/pod.yaml",
        line: 2,
        column: 16,
        code: "INCLUDE_FAILED",
        cause: "UNKNOWN_PREFIX",
        message: 'cannot load instruction "$foo/x": unknown prefix "$foo"',
        severity: "error",
      },
    });
  });

  test("without_an_origin_stays_at_its_reference", () => {
    // A value no layer set (a default, a hand-built manifest) has no origin.
    const classified = classifyError(rootFailure());
    expect(classified.kind === "user" && [classified.problem.file, classified.problem.line]).toEqual([
      "$foo/x",
      undefined,
    ]);
  });

  test("a_scope_rule_that_cannot_be_resolved_is_shown_at_its_manifest_value", () => {
    const scopeError = Object.assign(new Error("scope.allow[1]: cannot be resolved"), {
      code: "INVALID_RULE",
      rule: "scope.allow[1]",
      [Symbol.for("insomnia.scope.error")]: true,
    });
    const target = { file: "--overlay", line: 1, column: 30 };
    const error = new PodError("INVALID_SCOPE", "invalid scope", { cause: scopeError, origin: target });
    const classified = classifyError(error);
    expect(classified.kind === "user" && classified.problem).toMatchObject({ ...target, code: "INVALID_RULE" });
  });

  test("problems_of_a_template_parse_list_every_problem_found", () => {
    const first = new SystemPromptError("SYNTAX", "unclosed", { ref: "$workspace/main", file: "/w/main.md", line: 1 });
    const second = new SystemPromptError("UNKNOWN_VARIABLE", "unknown variable", {
      ref: "$workspace/main",
      file: "/w/main.md",
      line: 3,
    });
    Object.defineProperty(first, "problems", { value: [first, second] });
    const wrapped = new PodError("INVALID_SYSTEM_PROMPT_TEMPLATE", first.message, { cause: first });
    const classified = classifyError(wrapped);
    if (classified.kind !== "user") throw new Error("expected a user error");
    expect(problemsOf(wrapped, classified.problem).map((problem) => [problem.code, problem.line])).toEqual([
      ["SYNTAX", 1],
      ["UNKNOWN_VARIABLE", 3],
    ]);
  });
});
