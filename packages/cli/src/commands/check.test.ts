import { symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";

const { box, pod } = useSandbox();
const STACK_LINE = /^\s+at /m;

interface CheckJson {
  ok: boolean;
  problems: {
    file: string | null;
    line: number | null;
    column: number | null;
    code: string;
    cause: string | null;
    message: string;
    severity: string;
  }[];
}

describe("pod check", () => {
  test("an_unknown_provider_kind_is_an_error_with_did_you_mean", async () => {
    await box.write(".insomnia/pod.yaml", "provider:\n  kind: antropic\n  model: m\n");
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      '.insomnia/pod.yaml:2:9: NO_PROVIDER: provider.kind "antropic" is not one pod run knows (did you mean "anthropic"?); use anthropic, openai, openai-compatible\n',
    );
  });

  test("a_misspelt_include_name_gets_a_did_you_mean", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    await box.write(".insomnia/prompts/main.md", '{{> "reveiw"}}\n');
    await box.write(".insomnia/prompts/review.md", "R\n");
    const run = await pod("check", "--json");
    expect(run.code).toBe(1);
    const problem = (JSON.parse(run.stdout) as CheckJson).problems[0]!;
    expect(problem).toMatchObject({ code: "INCLUDE_FAILED", cause: "NOT_FOUND", line: 1 });
    expect(problem.message).toContain('(did you mean "$workspace/review"?)');
  });

  test("scope_targets_under_tilde_are_the_home_and_a_missing_target_is_a_warning", async () => {
    await box.write(
      ".insomnia/pod.yaml",
      "scope:\n  allow:\n    - target: .\n      permission: write\n    - target: ~/notes\n      permission: read\n    - target: docs\n      permission: read\n",
    );
    await box.write("notes/n.md", "n\n", box.home);
    // ~/notes lies outside the workspace: allowing it widens the scope, so the user trusts the layer first.
    expect((await pod("trust")).code).toBe(0);
    const run = await pod("check");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      '.insomnia/pod.yaml:7:15: warning: SCOPE_TARGET_MISSING: scope.allow[2]: target "docs" does not exist (' +
        join(box.ws, "docs") +
        "); the rule grants nothing until it does: fix the path or create it\n",
    );
    const prompt = await pod("prompt", "--now", "2026-01-02T03:04:05Z");
    expect(prompt.stdout).toContain(`Readable:\n  - ${box.ws}\n  - ${join(box.home, "notes")}\n`);
  });

  test("clean_workspace_prints_ok_with_the_source_count", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    await box.write(".insomnia/prompts/main.md", '{{> "a"}}\n{{> "$user/b"}}\n{{> "$insomnia/default"}}\n');
    await box.write(".insomnia/prompts/a.md", "A\n");
    await box.write("insomnia/prompts/b.md", "B\n", box.xdg);
    const run = await pod("check");
    expect(run).toEqual({
      code: 0,
      stdout:
        "ok: $workspace/main, 4 source files\n" +
        `workspace: ${box.ws}, manifest ${join(box.ws, ".insomnia/pod.yaml")}, not trusted; it grants nothing beyond the workspace\n`,
      stderr: "",
    });
  });

  test("defaults_check_with_no_insomnia_directory", async () => {
    const run = await pod("check");
    expect(run).toEqual({ code: 0, stdout: "ok: $insomnia/default, 1 source file\n", stderr: "" });
    const json = await pod("check", "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      ok: true,
      problems: [],
      workspace: { root: box.ws, manifest: null, trusted: true, grants: [] },
    });
  });

  test("every_manifest_issue_is_reported_not_just_the_first", async () => {
    await box.write(
      ".insomnia/pod.yaml",
      "worker:\n  instructions: x\n  max_turns: lots\nscope:\n  allow:\n    - target: .\n      permission: admin\n",
    );
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines.length).toBe(3);
    expect(lines[0]).toMatch(/^\.insomnia\/pod\.yaml:2:3: UNKNOWN_KEY: .*"instructions".*instruction/);
    expect(lines[1]).toMatch(/^\.insomnia\/pod\.yaml:3:14: INVALID_VALUE: /);
    expect(lines[2]).toMatch(/^\.insomnia\/pod\.yaml:7:19: INVALID_VALUE: /);
    expect(run.stderr).not.toMatch(STACK_LINE);
  });

  test("user_layer_and_overlay_issues_are_reported_together", async () => {
    await box.write("insomnia/pod.yaml", "worker:\n  temperature: 9\n", box.xdg);
    await box.write(".insomnia/pod.yaml", "pod:\n  nmae: x\n");
    const run = await pod("check", "--overlay", "worker.max_turns = 0", "--json");
    expect(run.code).toBe(1);
    const json = JSON.parse(run.stdout) as CheckJson;
    expect(json.ok).toBe(false);
    expect(json.problems.map((p) => [p.file, p.code])).toEqual([
      [join(box.xdg, "insomnia/pod.yaml"), "INVALID_VALUE"],
      [".insomnia/pod.yaml", "UNKNOWN_KEY"],
      ["--overlay", "INVALID_OVERLAY"],
    ]);
    expect(Object.keys(json.problems[0]!)).toEqual(["file", "line", "column", "code", "cause", "message", "severity"]);
    expect(json.problems.map((p) => p.cause)).toEqual([null, null, null]);
    expect(json.problems[1]).toMatchObject({ line: 2, column: 3, severity: "error" });
  });

  test("template_problem_is_reported_with_file_line_and_column", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    const file = await box.write(".insomnia/prompts/main.md", "Hello {{nmae}}\n");
    // The column is that of the variable's name inside the braces.
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.startsWith(`${file}:1:9: UNKNOWN_VARIABLE: unknown variable "nmae"`)).toBe(true);
    const json = JSON.parse((await pod("check", "--json")).stdout) as CheckJson;
    expect(json.problems).toMatchObject([{ file, line: 1, column: 9, code: "UNKNOWN_VARIABLE", severity: "error" }]);
  });

  test("every_template_problem_in_a_file_is_reported_in_order", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    const file = await box.write(".insomnia/prompts/main.md", "Work in {{cwdd}}.\nFine: {{cwd}}\nTools: {{tols}}\n");
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines.length).toBe(2);
    expect(lines).toEqual([
      expect.stringMatching(
        /:1:11: UNKNOWN_VARIABLE: unknown variable "cwdd" \(did you mean "cwd"\?\); the variables are /,
      ),
      expect.stringMatching(
        /:3:10: UNKNOWN_VARIABLE: unknown variable "tols" \(did you mean "tools"\?\); the variables are /,
      ),
    ]);
    expect(lines.every((line) => line.startsWith(`${file}:`))).toBe(true);
    expect(run.stderr).not.toMatch(STACK_LINE);

    const json = await pod("check", "--json");
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.stdout) as CheckJson;
    expect(parsed.ok).toBe(false);
    expect(parsed.problems.map((p) => [p.file, p.line, p.column, p.code, p.cause, p.severity])).toEqual([
      [file, 1, 11, "UNKNOWN_VARIABLE", null, "error"],
      [file, 3, 10, "UNKNOWN_VARIABLE", null, "error"],
    ]);
    expect(parsed.problems.map((p) => p.message.split(";")[0])).toEqual([
      'unknown variable "cwdd" (did you mean "cwd"?)',
      'unknown variable "tols" (did you mean "tools"?)',
    ]);

    // pod prompt stops at the first problem.
    const prompt = await pod("prompt");
    expect(prompt.code).toBe(1);
    expect(prompt.stderr).toContain('"cwdd"');
    expect(prompt.stderr).not.toContain('"tols"');
  });

  test("missing_include_names_the_path_looked_at", async () => {
    await box.write(".insomnia/prompts/main.md", '{{> "gone"}}\n');
    const run = await pod("check", "--overlay", 'worker.instruction = "$workspace/main"');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(join(box.ws, ".insomnia/prompts/gone.md"));
  });

  test("unknown_variables_and_a_missing_include_are_reported_in_the_same_run", async () => {
    // The missing include used to show only after the variables were fixed (issue 11).
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    const file = await box.write(".insomnia/prompts/main.md", "Hi {{nmae}}\n{{> missing}}\nIn {{cwdd}}\n");
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(/:1:6: UNKNOWN_VARIABLE: unknown variable "nmae"/),
      expect.stringMatching(/:2:1: INCLUDE_FAILED: .*missing/),
      expect.stringMatching(/:3:6: UNKNOWN_VARIABLE: unknown variable "cwdd"/),
    ]);
    expect(lines.every((line) => line.startsWith(`${file}:`))).toBe(true);
    expect(lines[1]).toContain(join(box.ws, ".insomnia/prompts/missing.md"));
    expect(run.stderr).not.toMatch(STACK_LINE);

    const json = JSON.parse((await pod("check", "--json")).stdout) as CheckJson;
    expect(json.ok).toBe(false);
    expect(json.problems.map((p) => [p.file, p.line, p.column, p.code, p.severity])).toEqual([
      [file, 1, 6, "UNKNOWN_VARIABLE", "error"],
      [file, 2, 1, "INCLUDE_FAILED", "error"],
      [file, 3, 6, "UNKNOWN_VARIABLE", "error"],
    ]);
  });

  test("agents_md_problem_is_a_warning_and_check_still_passes", async () => {
    await writeFile(join(box.ws, "AGENTS.md"), Buffer.from([0xc3, 0x28]));
    const run = await pod("check");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("ok: $insomnia/default, 1 source file\n");
    expect(run.stderr).toMatch(/AGENTS\.md: warning: AGENTS_MD_NOT_UTF8: /);
  });

  test("manifest_flag_and_cwd_flag_apply", async () => {
    await box.write("custom.yaml", "worker:\n  max_turns: -1\n");
    const run = await runPodInProcess(["check", "--cwd", box.ws, "--manifest", join(box.ws, "custom.yaml")], {
      cwd: box.home,
      env: box.env,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^${join(box.ws, "custom.yaml")}:2:14: INVALID_VALUE: `));
  });

  describe("an instruction that cannot be loaded is reported at the manifest value that set it", () => {
    test("unknown_prefix_in_the_project_layer_points_at_pod_yaml", async () => {
      await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$foo/x"\n');
      const run = await pod("check");
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe(
        '.insomnia/pod.yaml:2:16: INCLUDE_FAILED: [UNKNOWN_PREFIX] cannot load instruction "$foo/x": unknown prefix "$foo" in prompt reference "$foo/x"; ' +
          "use $insomnia/ (builtin), $user/ (your config dir) or $workspace/ (<cwd>/.insomnia/prompts)\n",
      );
      const json = await pod("check", "--json");
      expect(json.code).toBe(1);
      expect((JSON.parse(json.stdout) as CheckJson).problems).toEqual([
        {
          file: ".insomnia/pod.yaml",
          line: 2,
          column: 16,
          code: "INCLUDE_FAILED",
          cause: "UNKNOWN_PREFIX",
          message: expect.stringMatching(/^cannot load instruction "\$foo\/x": unknown prefix "\$foo"/),
          severity: "error",
        },
      ]);
    });

    test("missing_workspace_file_points_at_pod_yaml_and_names_the_path", async () => {
      await box.write(
        ".insomnia/pod.yaml",
        '# project\nworker:\n  max_turns: 3\n  instruction: "$workspace/missing"\n',
      );
      const run = await pod("check");
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^\.insomnia\/pod\.yaml:4:16: INCLUDE_FAILED: \[NOT_FOUND\] cannot load instruction: \$workspace\/missing: no file at /,
      );
      expect(run.stderr).toContain(join(box.ws, ".insomnia/prompts/missing.md"));
      expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
      const json = JSON.parse((await pod("check", "--json")).stdout) as CheckJson;
      expect(json.problems).toMatchObject([
        { file: ".insomnia/pod.yaml", line: 4, column: 16, code: "INCLUDE_FAILED", cause: "NOT_FOUND" },
      ]);
    });

    test("user_layer_instruction_points_at_the_absolute_user_file", async () => {
      const user = await box.write("insomnia/pod.yaml", "worker:\n  instruction: $workspace/gone\n", box.xdg);
      const run = await pod("check");
      expect(run.code).toBe(1);
      expect(run.stderr.startsWith(`${user}:2:16: INCLUDE_FAILED: [NOT_FOUND] `)).toBe(true);
    });

    test("overlay_instruction_points_at_the_overlay_which_wins_over_the_files", async () => {
      await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$foo/x"\n');
      const run = await pod("check", "--overlay", 'worker.instruction = "$user/x.md"');
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^--overlay:1:22: INCLUDE_FAILED: \[INVALID_REF\] cannot load instruction "\$user\/x\.md": /,
      );
      const json = JSON.parse(
        (await pod("check", "--json", "--overlay", 'worker.instruction = "$user/x.md"')).stdout,
      ) as CheckJson;
      expect(json.ok).toBe(false);
      expect(json.problems).toMatchObject([
        { file: "--overlay", line: 1, column: 22, code: "INCLUDE_FAILED", cause: "INVALID_REF" },
      ]);
    });

    test("with_an_invalid_scope_too_both_problems_show_each_at_its_manifest_value", async () => {
      await symlink("loop", join(box.ws, "loop"));
      await box.write(
        ".insomnia/pod.yaml",
        'worker:\n  instruction: "$workspace/missing"\nscope:\n  allow:\n    - {target: loop/x, permission: read}\n',
      );
      const json = JSON.parse((await pod("check", "--json")).stdout) as CheckJson;
      expect(json.problems.map((p) => [p.code, p.file, p.line, p.column, p.cause])).toEqual([
        ["INVALID_RULE", ".insomnia/pod.yaml", 5, 16, null],
        ["INCLUDE_FAILED", ".insomnia/pod.yaml", 2, 16, "NOT_FOUND"],
      ]);
    });

    test("a_missing_include_keeps_its_own_position_and_shows_the_loader_code", async () => {
      await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
      const main = await box.write(".insomnia/prompts/main.md", 'hi {{> "gone"}}\n');
      const run = await pod("check");
      expect(
        run.stderr.startsWith(
          `${main}:1:4: INCLUDE_FAILED: [NOT_FOUND] cannot load include: $workspace/gone: no file at `,
        ),
      ).toBe(true);
      const json = JSON.parse((await pod("check", "--json")).stdout) as CheckJson;
      expect(json.problems).toMatchObject([
        { file: main, line: 1, column: 4, code: "INCLUDE_FAILED", cause: "NOT_FOUND" },
      ]);
    });
  });
});
