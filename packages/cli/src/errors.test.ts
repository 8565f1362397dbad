import { ManifestError } from "@insomnia/manifest";
import { PodError } from "@insomnia/pod";
import { PromptLoaderError } from "@insomnia/prompt-loader";
import { SystemPromptError } from "@insomnia/template";
import { describe, expect, test } from "vitest";
import { CliError } from "./cli-error.ts";
import { classifyError } from "./errors.ts";

describe("classifyError", () => {
  test("manifest_error_is_the_users_with_its_position_and_no_repeated_location", () => {
    const error = new ManifestError("UNKNOWN_KEY", 'unknown key "instructions" in worker', { file: ".insomnia/pod.yaml", line: 4, column: 3 });
    expect(classifyError(error)).toEqual({
      kind: "user",
      problem: { file: ".insomnia/pod.yaml", line: 4, column: 3, code: "UNKNOWN_KEY", message: 'unknown key "instructions" in worker', severity: "error" },
    });
  });

  test("template_and_loader_errors_are_the_users", () => {
    const template = new SystemPromptError("UNKNOWN_VARIABLE", "unknown variable typo", { ref: "$workspace/a", file: "/w/a.md", line: 2, column: 5 });
    expect(classifyError(template)).toEqual({
      kind: "user",
      problem: { file: "/w/a.md", line: 2, column: 5, code: "UNKNOWN_VARIABLE", message: "unknown variable typo", severity: "error" },
    });
    const loader = new PromptLoaderError("NOT_FOUND", "no such prompt: /w/x.md", { ref: "$workspace/x", file: "/w/x.md" });
    expect(classifyError(loader)).toEqual({
      kind: "user",
      problem: { file: "/w/x.md", code: "NOT_FOUND", message: "no such prompt: /w/x.md", severity: "error" },
    });
  });

  test("pod_error_wrapping_a_template_error_reports_the_template_error", () => {
    const inner = new SystemPromptError("SYNTAX", "unclosed {{#if}}", { ref: "$workspace/a", file: "/w/a.md", line: 7, column: 1 });
    const outer = new PodError("INVALID_SYSTEM_PROMPT_TEMPLATE", `${inner.message}`, { cause: inner, ref: "$workspace/a", file: "/w/a.md", line: 7, column: 1 });
    expect(classifyError(outer)).toEqual({
      kind: "user",
      problem: { file: "/w/a.md", line: 7, column: 1, code: "SYNTAX", message: "unclosed {{#if}}", severity: "error" },
    });
  });

  test("pod_error_of_user_kind_is_the_users_and_api_misuse_is_a_bug", () => {
    expect(classifyError(new PodError("SEGMENT_LOCKED", "locked", { file: "/s/1.jsonl" })).kind).toBe("user");
    expect(classifyError(new PodError("INVALID_SCOPE", "bad rule")).kind).toBe("user");
    expect(classifyError(new PodError("NOT_MATERIALIZED", "call run() first")).kind).toBe("internal");
  });

  test("file_system_errors_about_a_path_are_the_users", () => {
    const enoent = Object.assign(new Error("ENOENT: no such file or directory, open '/nope'"), { code: "ENOENT", syscall: "open", path: "/nope", errno: -2 });
    expect(classifyError(enoent)).toEqual({
      kind: "user",
      problem: { file: "/nope", code: "ENOENT", message: "ENOENT: no such file or directory, open '/nope'", severity: "error" },
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
});
