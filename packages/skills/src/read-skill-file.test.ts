import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { makeSkillTree, type SkillTree, skillText } from "./__fixtures__/skill-tree.ts";
import { readSkillFile } from "./read-skill-file.ts";
import { SkillsError } from "./skills-error.ts";

let tree: SkillTree;
beforeEach(() => {
  tree = makeSkillTree();
});
afterEach(() => tree.cleanup());

function thrown(read: () => unknown): { code: string; file: string | undefined } {
  try {
    read();
  } catch (error) {
    if (!SkillsError.is(error)) throw error;
    return { code: error.code, file: error.file };
  }
  throw new Error("expected a SkillsError");
}

describe("readSkillFile", () => {
  test("reads_a_skill_inside_its_root", () => {
    const file = tree.write(".insomnia/skills/review/SKILL.md", skillText("review", "Reviews."));
    const rootDir = join(tree.cwd, ".insomnia/skills");
    expect(readSkillFile(file, { rootDir })).toEqual({
      text: skillText("review", "Reviews."),
      file,
      bytes: Buffer.byteLength(skillText("review", "Reviews.")),
    });
  });

  test("walked_file_at_its_walked_path_still_needs_the_readable_scope", () => {
    const file = tree.write(".insomnia/skills/review/SKILL.md", skillText("review", "Reviews."));
    const rootDir = join(tree.cwd, ".insomnia/skills");
    const asked: string[] = [];
    const isReadable = (path: string) => {
      asked.push(path);
      return false;
    };
    expect(thrown(() => readSkillFile(file, { rootDir, isReadable }))).toEqual({
      code: "SKILL_OUTSIDE_SCOPE",
      file,
    });
    expect(asked).toEqual([file]);
    expect(readSkillFile(file, { rootDir, isReadable: () => true }).file).toBe(file);
  });

  test("walked_file_opened_elsewhere_than_walked_is_checked_against_its_root", () => {
    // The walk took `review` for a plain directory; by the time SKILL.md is opened it is a
    // symlink out of the root: the descriptor's real path is not the walked one, so the
    // containment check runs on it.
    tree.write("review/SKILL.md", skillText("review", "Outside."), tree.outside);
    const rootDir = join(tree.cwd, ".insomnia/skills");
    mkdirSync(rootDir, { recursive: true });
    symlinkSync(join(tree.outside, "review"), join(rootDir, "review"));
    const file = join(rootDir, "review/SKILL.md");
    expect(thrown(() => readSkillFile(file, { rootDir }))).toEqual({
      code: "SKILL_OUTSIDE_ROOT",
      file,
    });
  });
});
