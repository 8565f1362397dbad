import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { makeSandbox, runPod } from "../__fixtures__/sandbox.ts";
import type { Sandbox } from "../__fixtures__/sandbox.ts";

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
});
afterEach(async () => {
  await box.cleanup();
});

const pod = (...args: string[]) => runPod(args, { cwd: box.ws, env: box.env });
const STACK_LINE = /^\s+at /m;

interface CheckJson {
  ok: boolean;
  problems: { file: string | null; line: number | null; column: number | null; code: string; message: string; severity: string }[];
}

describe("pod check", () => {
  test("clean_workspace_prints_ok_with_the_source_count", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    await box.write(".insomnia/prompts/main.md", '{{> "a"}}\n{{> "$user/b"}}\n{{> "$insomnia/default"}}\n');
    await box.write(".insomnia/prompts/a.md", "A\n");
    await box.write("insomnia/prompts/b.md", "B\n", box.xdg);
    const run = await pod("check");
    expect(run).toEqual({ code: 0, stdout: "ok: $workspace/main, 4 source files\n", stderr: "" });
  });

  test("defaults_check_with_no_insomnia_directory", async () => {
    const run = await pod("check");
    expect(run).toEqual({ code: 0, stdout: "ok: $insomnia/default, 1 source file\n", stderr: "" });
    const json = await pod("check", "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, problems: [] });
  });

  test("every_manifest_issue_is_reported_not_just_the_first", async () => {
    await box.write(".insomnia/pod.yaml", "worker:\n  instructions: x\n  max_turns: lots\nscope:\n  allow:\n    - target: .\n      permission: admin\n");
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
    expect(Object.keys(json.problems[0]!)).toEqual(["file", "line", "column", "code", "message", "severity"]);
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

  test("missing_include_names_the_path_looked_at", async () => {
    await box.write(".insomnia/prompts/main.md", '{{> "gone"}}\n');
    const run = await pod("check", "--overlay", 'worker.instruction = "$workspace/main"');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(join(box.ws, ".insomnia/prompts/gone.md"));
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
    const run = await runPod(["check", "--cwd", box.ws, "--manifest", join(box.ws, "custom.yaml")], { cwd: box.home, env: box.env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^${join(box.ws, "custom.yaml")}:2:14: INVALID_VALUE: `));
  });
});
