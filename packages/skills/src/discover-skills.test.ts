import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { makeSkillTree, type SkillTree, skillText } from "./__fixtures__/skill-tree.ts";
import { discoverSkills } from "./discover-skills.ts";
import { skillRoots } from "./skill-roots.ts";

let tree: SkillTree;
beforeEach(() => {
  tree = makeSkillTree();
});
afterEach(() => tree.cleanup());

const discover = (extra: Partial<Parameters<typeof discoverSkills>[0]> = {}) =>
  discoverSkills({ cwd: tree.cwd, env: tree.env, ...extra });
const codes = (catalog: ReturnType<typeof discoverSkills>) => catalog.warnings.map((w) => w.code);

describe("skillRoots", () => {
  test("four_roots_highest_first", () => {
    expect(skillRoots({ cwd: "/p", env: { HOME: "/h", XDG_CONFIG_HOME: "/x" } })).toEqual([
      { kind: "workspace", dir: "/p/.insomnia/skills", workspace: true },
      { kind: "workspace-agents", dir: "/p/.agents/skills", workspace: true },
      { kind: "user", dir: "/x/insomnia/skills", workspace: false },
      { kind: "user-agents", dir: "/h/.agents/skills", workspace: false },
    ]);
  });

  test("relative_xdg_config_home_falls_back_to_home_config", () => {
    const roots = skillRoots({ cwd: "/p", env: { HOME: "/h", XDG_CONFIG_HOME: "rel" } });
    expect(roots[2]?.dir).toBe("/h/.config/insomnia/skills");
  });
});

describe("discoverSkills", () => {
  test("finds_skills_in_every_root_sorted_by_name", () => {
    tree.write(".insomnia/skills/review/SKILL.md", skillText("review", "Reviews a change."));
    tree.write(".agents/skills/deploy/SKILL.md", skillText("deploy", "Deploys."));
    tree.write("insomnia/skills/style/SKILL.md", skillText("style", "House style."), tree.xdg);
    tree.write(".agents/skills/commit/SKILL.md", skillText("commit", "Writes commits."), tree.home);
    const catalog = discover();
    expect(catalog.warnings).toEqual([]);
    expect(catalog.skills.map((s) => [s.name, s.root, s.file])).toEqual([
      ["commit", "user-agents", join(tree.home, ".agents/skills/commit/SKILL.md")],
      ["deploy", "workspace-agents", join(tree.cwd, ".agents/skills/deploy/SKILL.md")],
      ["review", "workspace", join(tree.cwd, ".insomnia/skills/review/SKILL.md")],
      ["style", "user", join(tree.xdg, "insomnia/skills/style/SKILL.md")],
    ]);
    expect(catalog.skills[2]).toMatchObject({ description: "Reviews a change.", hidden: false, bytes: 83 });
    expect(catalog.skills[2]?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  test("workspace_skill_shadows_user_skill", () => {
    const mine = tree.write(".insomnia/skills/review/SKILL.md", skillText("review", "Workspace review."));
    const theirs = tree.write("insomnia/skills/review/SKILL.md", skillText("review", "User review."), tree.xdg);
    const catalog = discover();
    expect(catalog.skills.map((s) => s.description)).toEqual(["Workspace review."]);
    expect(catalog.shadowed).toEqual([{ name: "review", file: theirs, root: "user", shadowedBy: mine }]);
    expect(catalog.warnings).toEqual([]);
  });

  test("recall_only_skill_is_in_the_catalog_but_hidden", () => {
    tree.write(".insomnia/skills/memo/SKILL.md", skillText("memo", "Recall.", { extra: "brain-recall-only: true\n" }));
    expect(discover().skills.map((s) => [s.name, s.hidden])).toEqual([["memo", true]]);
  });

  test("broken_skill_is_left_out_with_a_positioned_warning_and_does_not_shadow", () => {
    const broken = tree.write(".insomnia/skills/review/SKILL.md", "---\nname: Review\ndescription: d\n---\n");
    tree.write("insomnia/skills/review/SKILL.md", skillText("review", "User review."), tree.xdg);
    const catalog = discover();
    expect(catalog.warnings).toEqual([
      expect.objectContaining({ code: "SKILL_BAD_NAME", file: broken, line: 2, column: 7 }),
    ]);
    expect(catalog.skills.map((s) => s.root)).toEqual(["user"]);
  });

  test("nested_skills_are_found_up_to_six_levels_and_skill_folders_are_not_descended", () => {
    tree.write(".insomnia/skills/a/b/c/d/e/six/SKILL.md", skillText("six", "Deep."));
    tree.write(".insomnia/skills/a/b/c/d/e/f/seven/SKILL.md", skillText("seven", "Too deep."));
    tree.write(".insomnia/skills/outer/SKILL.md", skillText("outer", "Outer."));
    tree.write(".insomnia/skills/outer/inner/SKILL.md", skillText("inner", "Inside a skill."));
    const catalog = discover();
    expect(catalog.skills.map((s) => s.name)).toEqual(["outer", "six"]);
    expect(codes(catalog)).toEqual(["SKILLS_TOO_DEEP"]);
  });

  test("dot_directories_are_skipped", () => {
    tree.write(".insomnia/skills/.git/x/SKILL.md", skillText("x", "Hidden dir."));
    expect(discover().skills).toEqual([]);
  });

  test("more_directories_than_the_cap_stop_the_search_visibly", () => {
    for (let i = 0; i < 12; i++)
      tree.write(
        `.insomnia/skills/s${String(i).padStart(2, "0")}/SKILL.md`,
        skillText(`s${String(i).padStart(2, "0")}`, "d"),
      );
    const catalog = discover({ limits: { maxDirs: 10 } });
    expect(catalog.skills).toHaveLength(10);
    expect(codes(catalog)).toEqual(["SKILLS_TOO_MANY_DIRS"]);
  });

  test("skill_symlinked_outside_its_root_is_left_out", () => {
    const secret = tree.write("secret/SKILL.md", skillText("secret", "Outside."), tree.outside);
    mkdirSync(join(tree.cwd, ".insomnia/skills/secret"), { recursive: true });
    symlinkSync(secret, join(tree.cwd, ".insomnia/skills/secret/SKILL.md"));
    symlinkSync(join(tree.outside, "secret"), join(tree.cwd, ".insomnia/skills/linked"));
    const catalog = discover();
    expect(catalog.skills).toEqual([]);
    expect(codes(catalog).sort()).toEqual(["SKILL_OUTSIDE_ROOT", "SKILL_OUTSIDE_ROOT"]);
  });

  test("a_root_given_unnormalized_names_paths_below_it_as_join_would", () => {
    tree.write(".insomnia/skills/review/SKILL.md", skillText("review", "Reviews."));
    tree.write("deep/SKILL.md", skillText("deep", "Outside."), tree.outside);
    symlinkSync(join(tree.outside, "deep"), join(tree.cwd, ".insomnia/skills/deep"));
    const normalized = join(tree.cwd, ".insomnia/skills");
    for (const dir of [
      `${normalized}/`,
      `${tree.cwd}/./.insomnia//skills`,
      `${tree.cwd}/.insomnia/../.insomnia/skills/`,
    ]) {
      const catalog = discover({ roots: [{ kind: "workspace", dir, workspace: true }] });
      expect(catalog.skills.map((s) => s.file)).toEqual([join(normalized, "review/SKILL.md")]);
      expect(catalog.warnings.map((w) => [w.code, w.file])).toEqual([["SKILL_OUTSIDE_ROOT", join(normalized, "deep")]]);
    }
  });

  test("symlink_inside_the_root_is_followed_once", () => {
    tree.write(".insomnia/skills/shared/review/SKILL.md", skillText("review", "Shared."));
    symlinkSync(join(tree.cwd, ".insomnia/skills/shared"), join(tree.cwd, ".insomnia/skills/again"));
    symlinkSync(join(tree.cwd, ".insomnia/skills"), join(tree.cwd, ".insomnia/skills/shared/loop"));
    const catalog = discover();
    expect(catalog.skills.map((s) => s.name)).toEqual(["review"]);
    expect(catalog.warnings).toEqual([]);
  });

  test("workspace_root_symlinked_outside_the_readable_scope_is_left_out", () => {
    tree.write("skills/review/SKILL.md", skillText("review", "From outside."), tree.outside);
    mkdirSync(join(tree.cwd, ".insomnia"), { recursive: true });
    symlinkSync(join(tree.outside, "skills"), join(tree.cwd, ".insomnia/skills"));
    const catalog = discover();
    expect(catalog.skills).toEqual([]);
    expect(codes(catalog)).toEqual(["SKILLS_ROOT_OUTSIDE_SCOPE"]);
    // Readable scope that allows the target: the skill is read.
    const allowed = discover({ isReadable: () => true });
    expect(allowed.skills.map((s) => s.name)).toEqual(["review"]);
  });

  test("workspace_skill_denied_by_the_scope_is_left_out", () => {
    tree.write(".insomnia/skills/review/SKILL.md", skillText("review", "d"));
    const catalog = discover({ isReadable: (path) => !path.endsWith("SKILL.md") });
    expect(codes(catalog)).toEqual(["SKILL_OUTSIDE_SCOPE"]);
  });

  test("user_root_symlinked_elsewhere_is_trusted", () => {
    tree.write("skills/style/SKILL.md", skillText("style", "Mine."), tree.outside);
    mkdirSync(join(tree.xdg, "insomnia"), { recursive: true });
    symlinkSync(join(tree.outside, "skills"), join(tree.xdg, "insomnia/skills"));
    expect(discover().skills.map((s) => s.name)).toEqual(["style"]);
  });

  test("fifo_never_blocks_and_devices_are_refused", () => {
    mkdirSync(join(tree.cwd, ".insomnia/skills/pipe"), { recursive: true });
    execFileSync("mkfifo", [join(tree.cwd, ".insomnia/skills/pipe/SKILL.md")]);
    mkdirSync(join(tree.cwd, ".insomnia/skills/dev"), { recursive: true });
    symlinkSync("/dev/zero", join(tree.cwd, ".insomnia/skills/dev/SKILL.md"));
    const catalog = discover({
      isReadable: () => true,
      roots: [{ kind: "workspace", dir: join(tree.cwd, ".insomnia/skills"), workspace: false }],
    });
    expect(catalog.skills).toEqual([]);
    expect(codes(catalog).sort()).toEqual(["SKILL_NOT_A_FILE", "SKILL_OUTSIDE_ROOT"]);
  });

  test("skill_over_one_mebibyte_is_left_out", () => {
    tree.write(".insomnia/skills/big/SKILL.md", skillText("big", "Big.", { body: "x".repeat(1024 * 1024) }));
    const catalog = discover();
    expect(catalog.warnings).toEqual([expect.objectContaining({ code: "SKILL_TOO_LARGE" })]);
  });

  test("skill_not_utf8_is_left_out_with_its_position", () => {
    const bytes = Buffer.concat([
      Buffer.from("---\nname: bad\ndescription: caf"),
      Buffer.from([0xe9]),
      Buffer.from("\n---\n"),
    ]);
    const file = tree.write(".insomnia/skills/bad/SKILL.md", bytes);
    expect(discover().warnings).toEqual([
      {
        code: "SKILL_NOT_UTF8",
        message: "is not valid UTF-8 (first bad byte at offset 30); save it as UTF-8",
        file,
        line: 3,
        column: 17,
      },
    ]);
  });

  test("bom_and_crlf_are_accepted", () => {
    tree.write(".insomnia/skills/win/SKILL.md", "\ufeff---\r\nname: win\r\ndescription: Windows.\r\n---\r\nBody\r\n");
    expect(discover().skills.map((s) => s.description)).toEqual(["Windows."]);
  });

  test("pod_started_in_home_reads_agents_skills_once", () => {
    tree.write(".agents/skills/commit/SKILL.md", skillText("commit", "Commits."), tree.home);
    const catalog = discoverSkills({ cwd: tree.home, env: tree.env });
    expect(catalog.skills.map((s) => [s.name, s.root])).toEqual([["commit", "workspace-agents"]]);
    expect(catalog.shadowed).toEqual([]);
  });

  test("missing_roots_are_silent", () => {
    expect(discover()).toEqual({ skills: [], shadowed: [], warnings: [] });
  });
});
