import { basename, dirname } from "node:path";
import { didYouMeanSuffix } from "@insomnia/errors";
import type { Skill } from "./discover-skills.ts";
import { parseSkill } from "./parse-skill.ts";
import { type IsReadable, readSkillFile } from "./read-skill-file.ts";
import { SkillsError } from "./skills-error.ts";

/** Name of the tool a pod registers when it has skills. */
export const LOAD_SKILL_TOOL = "load_skill";

/** Options of {@link readSkillBody} and {@link createLoadSkillTool}. */
export interface LoadSkillOptions {
  /** The pod's readable scope, checked for skills of a workspace root (as at discovery). */
  isReadable?: IsReadable | undefined;
}

/** What reading a skill's body needs of a catalog entry. */
export type LoadableSkill = Pick<Skill, "name" | "file" | "rootDir" | "root">;

/**
 * Reads a catalog skill's file again, under the rules it was found with (real path inside
 * its root, readable for a workspace root, 1 MiB, strict UTF-8, valid frontmatter with the
 * same name), and returns the Markdown after the frontmatter. Throws a {@link SkillsError}.
 */
export function readSkillBody(skill: LoadableSkill, options: LoadSkillOptions = {}): string {
  const workspace = skill.root === "workspace" || skill.root === "workspace-agents";
  const read = readSkillFile(skill.file, {
    rootDir: skill.rootDir,
    ...(workspace && options.isReadable !== undefined ? { isReadable: options.isReadable } : {}),
  });
  const parsed = parseSkill(read.text, { file: read.file, dirName: basename(dirname(read.file)) });
  if (!parsed.ok) {
    const [first] = parsed.warnings;
    throw new SkillsError(first?.code ?? "SKILL_BAD_FRONTMATTER", first?.message ?? "the skill is broken", {
      file: read.file,
      ...(first?.line === undefined ? {} : { line: first.line }),
      ...(first?.column === undefined ? {} : { column: first.column }),
    });
  }
  if (parsed.skill.name !== skill.name) {
    throw new SkillsError("SKILL_NAME_MISMATCH", `its name is now "${parsed.skill.name}", not "${skill.name}"`, {
      file: read.file,
    });
  }
  return parsed.skill.body;
}

/** The `load_skill` tool: the shape of a worker `Tool`, built without importing the worker. */
export interface LoadSkillTool {
  readonly name: typeof LOAD_SKILL_TOOL;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  execute(input: unknown): string;
}

/**
 * A tool that takes `{ name }` and returns that catalog skill's instructions (hidden skills
 * included), read from its file at call time. An unknown name or a broken file throws, which
 * a worker turns into an `isError` result the model sees.
 */
export function createLoadSkillTool(
  catalog: { readonly skills: readonly LoadableSkill[] },
  options: LoadSkillOptions = {},
): LoadSkillTool {
  const byName = new Map(catalog.skills.map((skill) => [skill.name, skill]));
  return {
    name: LOAD_SKILL_TOOL,
    description:
      "Loads the instructions of a skill by its name (as listed under Skills in the system prompt). Load a skill before a task that matches its description, then follow it.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", description: "The skill's name, e.g. review" } },
      required: ["name"],
      additionalProperties: false,
    },
    execute(input: unknown): string {
      const name = (input as { name?: unknown } | null)?.name;
      if (typeof name !== "string") {
        throw new SkillsError("INVALID_ARGUMENT", 'load_skill needs {"name": "<skill name>"}');
      }
      const skill = byName.get(name);
      if (skill === undefined) {
        const names = [...byName.keys()];
        throw new SkillsError(
          "SKILL_UNKNOWN",
          `no skill named ${JSON.stringify(name.slice(0, 100))}${didYouMeanSuffix(name.slice(0, 100), names)}; skills: ${names.length === 0 ? "(none)" : names.join(", ")}`,
        );
      }
      const body = readSkillBody(skill, options);
      return `Skill "${skill.name}" (directory: ${dirname(skill.file)})\n\n${body}`;
    },
  };
}
