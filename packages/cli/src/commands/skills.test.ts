import { access } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { useSandbox } from "../__fixtures__/sandbox.ts";

const { box, pod } = useSandbox();
const NOW = "2026-01-02T03:04:05Z";
const INTRO =
  "Skills hold instructions for particular kinds of task, each in its own SKILL.md. When a task matches a skill's description, load the skill with the load_skill tool (by its name) before you start, and follow it. Load only the skills you need.";

/** The done-when workspace: a workspace skill, a user skill, a hidden skill and a broken one. */
async function skillsWorkspace(): Promise<{ review: string; commit: string; memo: string; broken: string }> {
  await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
  await box.write(".insomnia/prompts/main.md", 'You are a pod.\nTools: {{join tools ", "}}\n');
  await box.write("AGENTS.md", "Use pnpm.\n");
  const review = await box.write(
    ".insomnia/skills/review/SKILL.md",
    "---\nname: review\ndescription: Reviews a change before it is merged.\n---\n# Review\n\nRead the whole diff first.\n",
  );
  const commit = await box.write(
    "insomnia/skills/commit/SKILL.md",
    "---\nname: commit\ndescription: >\n  Writes a commit message\n  in the house style.\n---\n# Commit\n",
    box.xdg,
  );
  const memo = await box.write(
    ".insomnia/skills/memo/SKILL.md",
    "---\nname: memo\ndescription: Recall notes.\nbrain-recall-only: true\n---\nNotes.\n",
  );
  const broken = await box.write(
    ".agents/skills/broken/SKILL.md",
    "---\ndescription: Has a bad name.\nname: Broken\n---\nBody.\n",
  );
  return { review, commit, memo, broken };
}

const brokenLine = (broken: string) =>
  `${broken}:3:7: warning: SKILL_BAD_NAME: name "Broken" is not a skill name: use 1 to 64 of a-z, 0-9 and "-", with no "-" at the start, at the end or twice in a row`;

describe("pod and skills", () => {
  test("done_when_workspace_gives_the_exact_prompt_and_warnings", async () => {
    const { review, commit, broken } = await skillsWorkspace();
    const run = await pod("prompt", "--now", NOW);
    expect(run.stderr).toBe(`pod: ${brokenLine(broken)}\n`);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`You are a pod.
Tools: edit_file, list_dir, load_skill, read_file, write_file

---
## Working boundaries

Readable:
  - ${box.ws}
Writable:
  - ${box.ws}

---
## Skills

${INTRO}

- commit: Writes a commit message in the house style. (file: ${commit})
- review: Reviews a change before it is merged. (file: ${review})

---
## Project instructions (AGENTS.md)

Use pnpm.
`);
  });

  test("check_lists_the_broken_skill_with_its_position", async () => {
    const { broken } = await skillsWorkspace();
    const run = await pod("check");
    expect(run).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^ok: \$workspace\/main, 1 source file, 3 skills\nworkspace: [^\n]*\n$/),
      stderr: `${brokenLine(broken)}\n`,
    });
    const json = JSON.parse((await pod("check", "--json")).stdout) as {
      ok: boolean;
      problems: Record<string, unknown>[];
    };
    expect(json.ok).toBe(true);
    expect(json.problems).toEqual([
      expect.objectContaining({ file: broken, line: 3, column: 7, code: "SKILL_BAD_NAME", severity: "warning" }),
    ]);
  });

  test("explain_lists_listed_hidden_and_shadowed_skills_with_tokens", async () => {
    const { review, memo } = await skillsWorkspace();
    const shadowed = await box.write(
      "insomnia/skills/review/SKILL.md",
      "---\nname: review\ndescription: The user's review.\n---\nUser body.\n",
      box.xdg,
    );
    const run = await pod("prompt", "--now", NOW, "--explain");
    expect(run.code).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(/^Skills \(listing \d+ of 8000 characters\)$/m);
    expect(out).toMatch(/^ {2}skill\s+status\s+root\s+listing tokens\s+body tokens\s+path$/m);
    expect(out).toMatch(/^ {2}commit\s+listed\s+user\s+\d+\s+\d+\s+\//m);
    expect(out).toMatch(new RegExp(`^  memo\\s+hidden\\s+workspace\\s+-\\s+\\d+\\s+${memo}$`, "m"));
    expect(out).toMatch(new RegExp(`^  review\\s+listed\\s+workspace\\s+\\d+\\s+\\d+\\s+${review}$`, "m"));
    expect(out).toContain(`  review  shadowed  user`);
    expect(out).toContain(`${shadowed} (shadowed by ${review})`);
    expect(out).toMatch(/^ {2}skills\s+\d+\s+\d+$/m);
    expect(out).toContain("  tools        edit_file, list_dir, load_skill, read_file, write_file\n");
    expect(out).toMatch(/^ {2}SKILL_BAD_NAME: .*broken\/SKILL\.md:3:7: name "Broken"/m);

    const json = JSON.parse((await pod("prompt", "--now", NOW, "--json")).stdout) as {
      skills: { budget: number; entries: { name: string; status: string; bodyTokens: number | null }[] };
    };
    expect(json.skills.budget).toBe(8000);
    expect(json.skills.entries.map((e) => [e.name, e.status])).toEqual([
      ["commit", "listed"],
      ["memo", "hidden"],
      ["review", "listed"],
      ["review", "shadowed"],
    ]);
    expect(json.skills.entries[1]?.bodyTokens).toBeGreaterThan(0);
  });

  test("budget_from_the_manifest_cuts_the_listing_visibly", async () => {
    await skillsWorkspace();
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\nskills:\n  budget: 40\n');
    const run = await pod("prompt", "--now", NOW);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${INTRO}\n\n[Skills listing over its budget of 40 characters: 2 skills left out.]\n`);
    expect(run.stderr).toContain(
      "pod: warning: SKILLS_OVER_BUDGET: the skills listing is over its budget of 40 characters: left out: commit, review. Shorten descriptions, remove skills, or raise skills.budget in the manifest\n",
    );
  });

  test("skills_budget_must_be_a_positive_whole_number", async () => {
    await box.write(".insomnia/pod.yaml", "skills:\n  budget: -1\n");
    const run = await pod("check");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      ".insomnia/pod.yaml:2:11: INVALID_VALUE: skills.budget must be a positive whole number",
    );
  });

  test("init_creates_no_skills", async () => {
    const run = await pod("init");
    expect(run.code).toBe(0);
    const missing = await access(join(box.ws, ".insomnia", "skills")).then(
      () => false,
      () => true,
    );
    expect(missing).toBe(true);
    expect(run.stdout).not.toContain("skill");
  });
});
