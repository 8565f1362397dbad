import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PromptLoader } from "@insomnia/prompt-loader";
import { SKILLS_INTRO } from "@insomnia/template";
import { Worker } from "@insomnia/worker";
import type { LlmResponse } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, describe, expect, test } from "vitest";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { previewSystemPrompt } from "./pod-prompt.ts";
import { Pod } from "./pod.ts";
import { collectWarnings } from "./pod-warning.ts";
import { FileSegmentStore } from "@insomnia/segment-store";
import { MemorySegmentStore } from "@insomnia/segment-store";

const INSTRUCTION = 'Pod.\nTools: {{join tools ", "}}\n';
const NOW = "2025-01-02T03:04:05.000Z";

const dirs: PodDir[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.cleanup();
});

interface SkillsDir extends PodDir {
  home: string;
  skill(root: string, name: string, description: string, extra?: string): Promise<string>;
}

async function skillsDir(): Promise<SkillsDir> {
  const dir = await makePodDir(INSTRUCTION);
  dirs.push(dir);
  const home = join(dir.root, "home");
  await mkdir(home, { recursive: true });
  const skill = async (root: string, name: string, description: string, extra = "") => {
    const file = join(root, name, "SKILL.md");
    await mkdir(dirname(file), { recursive: true });
    await writeFile(
      file,
      `---\nname: ${name}\ndescription: ${description}\n${extra}---\n# ${name}\n\nSteps for ${name}.\n`,
    );
    return file;
  };
  return { ...dir, home, env: { ...dir.env, HOME: home }, skill };
}

const workspaceRoot = (dir: PodDir) => join(dir.pwd, ".insomnia", "skills");
const userRoot = (dir: PodDir) => join(dir.root, "xdg", "insomnia", "skills");

/** A client that calls load_skill once with `name`, then answers with the tool's result. */
function loadingClient(name: string): ScriptedLlmClient {
  return new ScriptedLlmClient((request, index): LlmResponse => {
    if (index === 0) return { content: "", toolCalls: [{ id: "c1", name: "load_skill", input: { name } }] };
    const last = request.messages.at(-1);
    return { content: `${last?.role === "tool" && last.isError ? "ERROR " : ""}${last?.content ?? ""}` };
  });
}

describe("skills in a pod's prompt", () => {
  test("skills_section_lists_visible_skills_sorted", async () => {
    const dir = await skillsDir();
    const review = await dir.skill(workspaceRoot(dir), "review", "Reviews a change.");
    const commit = await dir.skill(userRoot(dir), "commit", "Writes commit messages.");
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: [],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(result.prompt).toBe(
      `Pod.\nTools: load_skill\n\n---\n## Working boundaries\n\nReadable:\n  - ${dir.pwd}\nWritable:\n  - ${dir.pwd}\n\n---\n## Skills\n\n${SKILLS_INTRO}\n\n- commit: Writes commit messages. (file: ${commit})\n- review: Reviews a change. (file: ${review})\n`,
    );
    expect(result.sources.map((s) => [s.ref, s.file])).toEqual([
      ["$workspace/main", join(dir.pwd, ".insomnia/prompts/main.md")],
      ["skill:commit", commit],
      ["skill:review", review],
    ]);
    expect(result.warnings).toEqual([]);
  });

  test("skills_section_absent_without_skills", async () => {
    const dir = await skillsDir();
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: ["read_file"],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(result.prompt).toBe(
      `Pod.\nTools: read_file\n\n---\n## Working boundaries\n\nReadable:\n  - ${dir.pwd}\nWritable:\n  - ${dir.pwd}\n`,
    );
    expect(result.sections.skills).toBeUndefined();
    expect(result.skills.catalog).toEqual([]);
  });

  test("recall_only_skill_is_not_listed", async () => {
    const dir = await skillsDir();
    await dir.skill(workspaceRoot(dir), "memo", "Recall only.", "brain-recall-only: true\n");
    await dir.skill(workspaceRoot(dir), "manual", "Manual only.", "disable-model-invocation: true\n");
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: [],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(result.sections.skills).toBeUndefined();
    expect(result.prompt).not.toContain("## Skills");
    expect(result.skills.hidden.map((s) => s.name)).toEqual(["manual", "memo"]);
    // Hidden skills can still be loaded, so the pod still has load_skill.
    expect(result.prompt).toContain("Tools: load_skill\n");
  });

  test("workspace_skill_shadows_user_skill", async () => {
    const dir = await skillsDir();
    const mine = await dir.skill(workspaceRoot(dir), "review", "Workspace review.");
    const theirs = await dir.skill(userRoot(dir), "review", "User review.");
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: [],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(result.prompt).toContain(`- review: Workspace review. (file: ${mine})\n`);
    expect(result.prompt).not.toContain("User review.");
    expect(result.skills.shadowed).toEqual([{ name: "review", file: theirs, root: "user", shadowedBy: mine }]);
  });

  test("skills_over_budget_are_cut_visibly", async () => {
    const dir = await skillsDir();
    for (const name of ["alpha", "beta", "gamma", "delta"])
      await dir.skill(workspaceRoot(dir), name, `${name} `.repeat(40));
    const manifest = { ...dir.manifest, skills: { budget: 600 } };
    const notifier = collectWarnings();
    const result = await previewSystemPrompt({ manifest, tools: [], now: new Date(NOW), env: dir.env, notifier });
    expect(result.skills.characters).toBeLessThanOrEqual(600);
    expect(result.sections.skills).toMatch(/\n\[Skills listing over its budget of 600 characters: .*\]\n$/);
    expect(notifier.warnings.map((w) => w.code)).toEqual(["SKILLS_OVER_BUDGET"]);
    expect(notifier.warnings[0]?.message).toContain("raise skills.budget in the manifest");
    expect(result.warnings).toEqual(notifier.warnings);
  });

  test("broken_skill_is_left_out_and_the_prompt_still_builds", async () => {
    const dir = await skillsDir();
    const broken = await dir.skill(workspaceRoot(dir), "broken", "[unclosed");
    const notifier = collectWarnings();
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: [],
      now: new Date(NOW),
      env: dir.env,
      notifier,
    });
    expect(result.sections.skills).toBeUndefined();
    expect(notifier.warnings).toEqual([
      expect.objectContaining({ code: "SKILL_BAD_FRONTMATTER", file: broken, line: 4, column: 1 }),
    ]);
  });

  test("workspace_skills_symlinked_outside_the_scope_are_left_out", async () => {
    const dir = await skillsDir();
    await dir.skill(join(dir.outside, "skills"), "steal", "Reads secrets.");
    await mkdir(join(dir.pwd, ".insomnia"), { recursive: true });
    const { symlink } = await import("node:fs/promises");
    await symlink(join(dir.outside, "skills"), workspaceRoot(dir));
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: [],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(result.prompt).not.toContain("steal");
    expect(result.warnings.map((w) => w.code)).toEqual(["SKILLS_ROOT_OUTSIDE_SCOPE"]);
  });
});

describe("a pod with skills", () => {
  test("pod_registers_load_skill_and_serves_bodies_hidden_ones_included", async () => {
    const dir = await skillsDir();
    await dir.skill(workspaceRoot(dir), "memo", "Recall.", "brain-recall-only: true\n");
    const worker = new Worker({ client: loadingClient("memo") });
    const pod = await Pod.fromManifest(dir.manifest, {
      worker,
      store: new MemorySegmentStore(),
      clock: countingClock(NOW),
      env: dir.env,
    });
    const result = await pod.run("go");
    expect(worker.tools.names()).toEqual(["load_skill"]);
    expect(result.final).toBe(
      `Skill "memo" (directory: ${join(workspaceRoot(dir), "memo")})\n\n# memo\n\nSteps for memo.\n`,
    );
    await pod.close();
  });

  test("load_skill_with_an_unknown_name_is_an_error_result", async () => {
    const dir = await skillsDir();
    await dir.skill(workspaceRoot(dir), "review", "Reviews.");
    const worker = new Worker({ client: loadingClient("nope") });
    const pod = await Pod.fromManifest(dir.manifest, {
      worker,
      store: new MemorySegmentStore(),
      clock: countingClock(NOW),
      env: dir.env,
    });
    expect((await pod.run("go")).final).toBe('ERROR no skill named "nope"; skills: review');
    await pod.close();
  });

  test("pod_without_skills_registers_no_tool", async () => {
    const dir = await skillsDir();
    const worker = new Worker({ client: new ScriptedLlmClient(() => ({ content: "ok" })) });
    const pod = await Pod.fromManifest(dir.manifest, {
      worker,
      store: new MemorySegmentStore(),
      clock: countingClock(NOW),
      env: dir.env,
    });
    await pod.run("go");
    expect(worker.tools.names()).toEqual([]);
    await pod.close();
  });

  test("restored_pod_never_rereads_skills_and_warns_when_a_skill_changed", async () => {
    const dir = await skillsDir();
    const review = await dir.skill(workspaceRoot(dir), "review", "Reviews.");
    const storeDir = join(dir.root, "segments");
    const worker = new Worker({ client: new ScriptedLlmClient(() => ({ content: "ok" })) });
    const pod = await Pod.fromManifest(dir.manifest, {
      worker,
      store: new FileSegmentStore(storeDir),
      clock: countingClock(NOW),
      env: dir.env,
    });
    await pod.run("one");
    await pod.close();
    const prompt = worker.getSystemPrompt();

    await dir.skill(workspaceRoot(dir), "added", "Appeared later.");
    await writeFile(review, "---\nname: review\ndescription: Changed.\n---\nNew steps.\n");
    const notifier = collectWarnings();
    const loader = PromptLoader.forPod({ cwd: dir.pwd, env: dir.env });
    const again = new Worker({ client: loadingClient("review") });
    const restored = await Pod.restore(new FileSegmentStore(storeDir), pod.segmentId!, again, { notifier, loader });
    expect(again.getSystemPrompt()).toBe(prompt);
    expect(notifier.warnings.map((w) => [w.code, w.file])).toEqual([["SOURCES_CHANGED", review]]);
    expect(notifier.warnings[0]?.message).toContain("skill:review");
    // The restored load_skill serves the recorded skills only (not "added"), from their files.
    expect(again.tools.names()).toEqual(["load_skill"]);
    expect((await restored.run("two")).final).toBe(`Skill "review" (directory: ${dirname(review)})\n\nNew steps.\n`);
    await restored.close();
  });
});
