import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "@insomnia/manifest";
import { PromptLoaderError } from "@insomnia/prompt-loader";
import { ScopeError } from "@insomnia/scope";
import { SystemPromptError } from "@insomnia/template";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { PodError } from "./pod-error.ts";
import { parsePodPrompt } from "./pod-prompt.ts";

// What a reporter (the pod command) shows for a PodError comes from its `problems`, each from
// its own fields: these tests pin the places they carry, a manifest value's among them.

let root: string;
let ws: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pod-errors-")));
  ws = join(root, "ws");
  await mkdir(join(ws, ".insomnia", "prompts"), { recursive: true });
  env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "xdg") };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function failure(manifestText: string, overlays: string[] = []): Promise<PodError> {
  await writeFile(join(ws, ".insomnia", "pod.yaml"), manifestText);
  const { manifest } = await loadManifest({ cwd: ws, env, overlays });
  const error = await parsePodPrompt(manifest, { env }).catch((caught: unknown) => caught);
  if (!PodError.is(error)) throw new Error(`expected a PodError, got ${String(error)}`);
  return error;
}

const where = (error: { code: string; file?: string; line?: number; column?: number }) => [
  error.code,
  error.file,
  error.line,
  error.column,
];

describe("a PodError reports the problems of the failure it stands for", () => {
  test("a_template_failure_reports_every_problem_of_the_parse_at_its_line", async () => {
    const main = join(ws, ".insomnia", "prompts", "main.md");
    await writeFile(main, "{{tols}}\n{{> gone}}\n{{nope}}\n");
    const error = await failure('worker:\n  instruction: "$workspace/main"\n');
    expect(error.code).toBe("INVALID_SYSTEM_PROMPT_TEMPLATE");
    expect(SystemPromptError.is(error.cause)).toBe(true);
    expect(error.problems).toEqual((error.cause as SystemPromptError).problems);
    expect(error.problems.map(where)).toEqual([
      ["UNKNOWN_VARIABLE", main, 1, 3],
      ["INCLUDE_FAILED", main, 2, 1],
      ["UNKNOWN_VARIABLE", main, 3, 3],
    ]);
    expect(PromptLoaderError.is(error.problems[1]?.cause)).toBe(true);
  });

  test("an_instruction_that_cannot_be_loaded_is_reported_at_the_manifest_value_that_names_it", async () => {
    const error = await failure('worker:\n  instruction: "$workspace/missing"\n');
    expect([error.code, error.ref, error.line]).toEqual([
      "INVALID_SYSTEM_PROMPT_TEMPLATE",
      "$workspace/missing",
      undefined,
    ]);
    expect(error.problems.map(where)).toEqual([["INCLUDE_FAILED", ".insomnia/pod.yaml", 2, 16]]);
    expect(error.problems[0]?.detail).toContain("$workspace/missing");
    const overlaid = await failure("worker:\n  max_turns: 3\n", ['worker.instruction = "$foo/x"']);
    expect(overlaid.problems.map(where)).toEqual([["INCLUDE_FAILED", "--overlay", 1, 22]]);
    expect(PromptLoaderError.is(overlaid.problems[0]?.cause) && overlaid.problems[0].cause.code).toBe("UNKNOWN_PREFIX");
  });

  test("a_scope_rule_that_cannot_be_resolved_is_reported_at_its_target_in_the_manifest", async () => {
    await writeFile(join(ws, ".insomnia", "prompts", "main.md"), "Hi\n");
    await symlink("loop", join(ws, "loop"));
    const error = await failure(
      'worker:\n  instruction: "$workspace/main"\nscope:\n  allow:\n    - target: .\n      permission: read\n    - target: loop/inner\n      permission: read\n',
    );
    expect(error.code).toBe("INVALID_SCOPE");
    expect(ScopeError.is(error.cause)).toBe(true);
    expect(error.problems).toEqual([error.cause]);
    expect(error.problems.map(where)).toEqual([["INVALID_RULE", ".insomnia/pod.yaml", 7, 15]]);
    expect((error.problems[0] as ScopeError).rule).toBe("scope.allow[1]");
  });

  test("a_pwd_that_cannot_be_resolved_is_reported_where_it_was_set", async () => {
    await symlink("loop", join(ws, "loop"));
    const pwd = join(ws, "loop", "inner");
    const error = await failure("", [`pod.pwd = "${pwd}"`]);
    expect(error.code).toBe("INVALID_SCOPE");
    expect(error.problems.map(where)).toEqual([["INVALID_BASE", "--overlay", 1, 11]]);
  });
});
