import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { validateManifestLayer } from "@insomnia/manifest";
import { describe, expect, test } from "vitest";
import { runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";

const { box, pod } = useSandbox();
const NOW = "2026-01-02T03:04:05Z";

describe("pod init", () => {
  test("creates_a_workspace_that_passes_check_and_prompt", async () => {
    const before = await pod("prompt", "--now", NOW, "--tool", "read_file");
    const run = await pod("init");
    expect(run).toEqual({
      code: 0,
      stdout:
        "wrote .insomnia/pod.yaml\nwrote .insomnia/prompts/instruction.md\nNext: edit .insomnia/prompts/instruction.md, then run 'pod check' and 'pod prompt'.\n",
      stderr: "",
    });
    expect(await pod("check")).toEqual({
      code: 0,
      stdout: expect.stringMatching(
        /^ok: \$workspace\/instruction, 2 source files\nworkspace: .*, not trusted; it grants nothing beyond the workspace\n$/,
      ),
      stderr: "",
    });
    const after = await pod("prompt", "--now", NOW, "--tool", "read_file");
    expect([after.code, after.stderr]).toEqual([0, ""]);
    // The starter instruction is the builtin default plus a comment, so the prompt is unchanged.
    expect(after.stdout).toBe(before.stdout);
  });

  test("manifest_shows_every_key_and_validates", async () => {
    await pod("init");
    const text = await readFile(join(box.ws, ".insomnia/pod.yaml"), "utf8");
    for (const key of [
      "pod",
      "name",
      "pwd",
      "worker",
      "instruction",
      "max_tokens",
      "max_turns",
      "temperature",
      "tools",
      "skills",
      "budget",
      "scope",
      "allow",
      "deny",
      "target",
      "permission",
      "recursive",
      "provider",
      "kind",
      "model",
      "base_url",
      "api_key_file",
    ]) {
      expect(text, key).toMatch(new RegExp(`^[# ]*(- )?${key}:`, "m"));
    }
    expect(text).toMatch(/^ {2}instruction: "\$workspace\/instruction"$/m);
    expect(validateManifestLayer(text, ".insomnia/pod.yaml")).toEqual({
      ok: true,
      value: { worker: { instruction: "$workspace/instruction" } },
    });
    // Uncommenting the worker defaults must still validate: they are real defaults, not placeholders.
    const uncommented = text
      .replace(/^ {2}# (max_tokens|max_turns|temperature|tools): (\[[^\]]*\]|\S+).*$/gm, "  $1: $2")
      .replace(/^# skills:\n# {3}budget: (\d+)$/m, "skills:\n  budget: $1");
    const result = validateManifestLayer(uncommented, ".insomnia/pod.yaml");
    expect(result.ok && result.value.worker).toEqual({
      instruction: "$workspace/instruction",
      max_tokens: 8192,
      max_turns: 50,
      temperature: 0,
      tools: ["edit_file", "list_dir", "read_file", "write_file"],
    });
    expect(result.ok && result.value.skills).toEqual({ budget: 8000 });
    // Every provider kind pod run knows is named.
    expect(text).toMatch(/^# {3}kind: anthropic +# anthropic \| openai \| openai-compatible$/m);
    const instruction = await readFile(join(box.ws, ".insomnia/prompts/instruction.md"), "utf8");
    expect(instruction).toContain('{{> "$insomnia/default"}}');
  });

  test("refuses_to_overwrite_then_force_works", async () => {
    await pod("init");
    const instruction = join(box.ws, ".insomnia/prompts/instruction.md");
    const manifest = join(box.ws, ".insomnia/pod.yaml");
    await writeFile(instruction, "mine\n");
    await writeFile(manifest, "# mine\n");

    const refused = await pod("init");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toBe(
      `pod: ${manifest}: FILE_EXISTS: .insomnia/pod.yaml already exists; pass --force to overwrite it\n`,
    );
    expect(await readFile(instruction, "utf8")).toBe("mine\n");
    expect(await readFile(manifest, "utf8")).toBe("# mine\n");

    const forced = await pod("init", "--force");
    expect(forced.code).toBe(0);
    expect(await readFile(instruction, "utf8")).toContain('{{> "$insomnia/default"}}');
    expect(await readFile(manifest, "utf8")).toContain('instruction: "$workspace/instruction"');
  });

  test("refusal_writes_nothing_when_only_the_second_file_exists", async () => {
    const instruction = await box.write(".insomnia/prompts/instruction.md", "mine\n");
    const refused = await pod("init");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `pod: ${instruction}: FILE_EXISTS: .insomnia/prompts/instruction.md already exists`,
    );
    await expect(readFile(join(box.ws, ".insomnia/pod.yaml"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("cwd_flag_chooses_the_directory", async () => {
    const run = await runPodInProcess(["init", "--cwd", "ws"], { cwd: join(box.ws, ".."), env: box.env });
    expect(run.code).toBe(0);
    expect(await readFile(join(box.ws, ".insomnia/pod.yaml"), "utf8")).toContain("worker:");
    expect((await runPodInProcess(["check", "--cwd", box.ws], { cwd: box.home, env: box.env })).code).toBe(0);
  });
});
