import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { makeSkillTree, type SkillTree, skillText } from "./__fixtures__/skill-tree.ts";
import { discoverSkills } from "./discover-skills.ts";
import { createLoadSkillTool, readSkillBody } from "./load-skill.ts";
import { SkillsError } from "./skills-error.ts";

let tree: SkillTree;
beforeEach(() => {
  tree = makeSkillTree();
  tree.write(
    ".insomnia/skills/review/SKILL.md",
    skillText("review", "Reviews.", { body: "# Review\n\nRead the diff.\n" }),
  );
  tree.write(
    ".insomnia/skills/memo/SKILL.md",
    skillText("memo", "Recall.", { extra: "brain-recall-only: true\n", body: "Memo body.\n" }),
  );
});
afterEach(() => tree.cleanup());

const catalog = () => discoverSkills({ cwd: tree.cwd, env: tree.env });

describe("load_skill", () => {
  test("load_skill_returns_the_body_after_the_frontmatter", () => {
    const tool = createLoadSkillTool(catalog());
    expect(tool.name).toBe("load_skill");
    expect(tool.execute({ name: "review" })).toBe(
      `Skill "review" (directory: ${join(tree.cwd, ".insomnia/skills/review")})\n\n# Review\n\nRead the diff.\n`,
    );
  });

  test("load_skill_loads_hidden_skills_by_name", () => {
    expect(createLoadSkillTool(catalog()).execute({ name: "memo" })).toMatch(/\n\nMemo body\.\n$/);
  });

  test("load_skill_refuses_an_unknown_name_with_a_suggestion", () => {
    const tool = createLoadSkillTool(catalog());
    let error: unknown;
    try {
      tool.execute({ name: "reveiw" });
    } catch (caught) {
      error = caught;
    }
    expect(SkillsError.is(error)).toBe(true);
    expect((error as SkillsError).code).toBe("SKILL_UNKNOWN");
    expect((error as SkillsError).message).toBe(
      'no skill named "reveiw" (did you mean "review"?); skills: memo, review',
    );
    expect(() => tool.execute({})).toThrow('load_skill needs {"name": "<skill name>"}');
    expect(() => tool.execute(null)).toThrow(SkillsError);
  });

  test("load_skill_reads_under_the_same_rules_at_call_time", () => {
    const found = catalog();
    const file = join(tree.cwd, ".insomnia/skills/review/SKILL.md");
    writeFileSync(file, "---\nname: review\n---\n");
    let error: unknown;
    try {
      readSkillBody(found.skills.find((s) => s.name === "review")!);
    } catch (caught) {
      error = caught;
    }
    expect((error as SkillsError).code).toBe("SKILL_BAD_DESCRIPTION");
    expect((error as SkillsError).message).toBe(
      `${file}:1:1: the frontmatter has no description; say what the skill does and when to use it`,
    );
  });

  test("load_skill_checks_the_readable_scope_again", () => {
    const tool = createLoadSkillTool(catalog(), { isReadable: () => false });
    expect(() => tool.execute({ name: "review" })).toThrow(/outside the pod's readable scope/);
  });
});
