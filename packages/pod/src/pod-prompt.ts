import { isSameOrInside } from "@insomnia/safe-read";
import type { ErrorLocation } from "@insomnia/errors";
import {
  checkWorkspaceTrust,
  DEFAULT_SKILLS_BUDGET,
  manifestProvenance,
  type PodManifest,
  realDirectory,
  workspaceRootOf,
} from "@insomnia/manifest";
import { PromptLoader, PromptLoaderError } from "@insomnia/prompt-loader";
import { Scope, ScopeError } from "@insomnia/scope";
import { discoverSkills, LOAD_SKILL_TOOL, skillRoots } from "@insomnia/skills";
import type { ShadowedSkill, Skill, SkillCatalog, SkillRoot } from "@insomnia/skills";
import {
  assembleSystemPromptWithSections,
  formatSkillsSection,
  SystemPromptError,
  SystemPromptTemplate,
} from "@insomnia/template";
import type { ListedSkill, PromptSections, TemplateLoader, TemplateSource } from "@insomnia/template";
import { readAgentsMd } from "./agents-md.ts";
import { PodError } from "./pod-error.ts";
import { makePodTools, type PodToolFactory } from "./pod-tools.ts";
import { silentNotifier } from "./pod-warning.ts";
import { workingBoundaries } from "./working-boundaries.ts";
import type { Notifier, PodWarning } from "./pod-warning.ts";

/** A pod's instruction, parsed and checked, waiting for its one render. */
export interface ParsedPodPrompt {
  /** The pod's absolute working directory (`manifest.pod.pwd`). */
  readonly cwd: string;
  /**
   * Real path of the workspace root every "inside the workspace" check uses (AGENTS.md,
   * `$workspace` prompts, workspace skills): where the pod runs, never a value the checkout set.
   */
  readonly root: string;
  readonly scope: Scope;
  readonly template: SystemPromptTemplate;
  /** Where skills are looked for, highest first (computed, nothing read yet). */
  readonly skillRoots: readonly SkillRoot[];
  /** Characters the Skills listing may take (`skills.budget`). */
  readonly skillsBudget: number;
}

/** Options of {@link parsePodPrompt}. */
export interface ParsePodPromptOptions {
  /** Default: `PromptLoader.forPod({ cwd: manifest.pod.pwd, env })`. */
  loader?: TemplateLoader | undefined;
  /** Environment for the default loader's `$user` root and the user skill roots (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Trust the manifest's workspace layer even where the user has not (see `PodDeps.trustWorkspace`). */
  trustWorkspace?: boolean | undefined;
}

/** What goes into a render besides the parsed instruction. */
export interface RenderPodPromptInput {
  /** Tool names; sorted here. */
  tools: readonly string[];
  now: Date;
  notifier?: Notifier;
  /**
   * The skills catalog, when the caller already read it (a pod reads it first to register
   * `load_skill`); otherwise it is read here. Its warnings are reported here either way.
   */
  skills?: SkillCatalog;
}

/** What a prompt's skills came to: the catalog as read, and what the Skills section lists. */
export interface RenderedSkills {
  /** Every usable skill (listed and hidden), sorted by name; `load_skill` serves these. */
  readonly catalog: readonly Skill[];
  /** Skills in the section, descriptions as shown (shortened ones end with `…`). */
  readonly listed: readonly ListedSkill[];
  /** Not listed: `disable-model-invocation` or `brain-recall-only`. */
  readonly hidden: readonly Skill[];
  /** Left out of the section for the budget. */
  readonly omitted: readonly Skill[];
  /** Hidden by a skill of the same name in a higher root. */
  readonly shadowed: readonly ShadowedSkill[];
  readonly budget: number;
  /** Characters the listing lines take. */
  readonly characters: number;
}

/** A system prompt as a pod sends it, with the parts it was made of. */
export interface RenderedPodPrompt {
  /** The full system prompt, byte for byte what the worker receives. */
  prompt: string;
  /** Tool names the prompt was rendered with, sorted (`load_skill` added when there are skills). */
  tools: readonly string[];
  /** Every file the prompt was built from: the instruction's, root first, then each skill's SKILL.md. */
  sources: readonly TemplateSource[];
  sections: { instruction: string; workingBoundaries: string; skills?: string; agentsMd?: string };
  /** Where each section lies in `prompt` (offsets; recorded with it, so a restored pod knows them too). */
  spans: PromptSections;
  skills: RenderedSkills;
  agentsMd?: { file: string; bytes: number; totalBytes: number; truncated: boolean };
  warnings: readonly PodWarning[];
}

/** Builds the scope and parses the instruction with all its includes; renders nothing. */
export async function parsePodPrompt(
  manifest: PodManifest,
  options: ParsePodPromptOptions = {},
): Promise<ParsedPodPrompt> {
  // Refused before anything is read: a checkout may narrow what the pod can do, never widen it.
  checkWorkspaceTrust(manifest, { env: options.env ?? process.env, trusted: options.trustWorkspace });
  const cwd = manifest.pod.pwd;
  const root = realDirectory(workspaceRootOf(manifest));
  const scope = buildScope(manifest);
  const template = await parsePodInstruction(manifest, options);
  checkWorkspaceSources(template.sources, root);
  const budget = manifest.skills?.budget ?? DEFAULT_SKILLS_BUDGET;
  return {
    cwd,
    root,
    scope,
    template,
    skillRoots: skillRoots({ cwd, env: options.env ?? process.env }),
    skillsBudget: budget,
  };
}

/**
 * Parses the manifest's instruction with all its includes, as a pod does; a failure is a
 * PodError `INVALID_SYSTEM_PROMPT_TEMPLATE` reporting the template's problems, an instruction
 * that cannot be loaded at the manifest value `worker.instruction`.
 */
export async function parsePodInstruction(
  manifest: PodManifest,
  options: Pick<ParsePodPromptOptions, "loader" | "env"> = {},
): Promise<SystemPromptTemplate> {
  const loader = options.loader ?? PromptLoader.forPod({ cwd: manifest.pod.pwd, env: options.env ?? process.env });
  const instructionAt = manifestProvenance(manifest)?.origins["worker.instruction"];
  try {
    return await SystemPromptTemplate.parse(manifest.worker.instruction, loader, { instructionAt });
  } catch (error) {
    throw templateError(error, "INVALID_SYSTEM_PROMPT_TEMPLATE", manifest.worker.instruction);
  }
}

/**
 * Reads the skills catalog of a parsed pod prompt: its four roots, the workspace ones inside the
 * workspace root and within the readable scope (a checkout's symlink must not pull in `~`).
 */
export function readSkillCatalog(parsed: ParsedPodPrompt): SkillCatalog {
  const { scope, root } = parsed;
  return discoverSkills({
    cwd: parsed.cwd,
    roots: parsed.skillRoots,
    // Skills ask about real paths (realpath, or the kernel's path of the open descriptor).
    isReadable: (path) => isSameOrInside(root, path) && scope.explain(path, { resolved: true }).permission !== "none",
  });
}

/** The prompt source recorded for a skill file (restore warns SOURCES_CHANGED when it changes). */
export function skillSourceRef(name: string): string {
  return `skill:${name}`;
}

/** Renders a parsed instruction with the time, the tools and `<cwd>/AGENTS.md` into the final prompt. */
export async function renderPodPrompt(
  parsed: ParsedPodPrompt,
  input: RenderPodPromptInput,
): Promise<RenderedPodPrompt> {
  const notifier = input.notifier ?? silentNotifier;
  const agents = await readAgentsMd(parsed.cwd, parsed.scope, { root: parsed.root });
  for (const warning of agents.warnings) notifier.warn(warning);
  const catalog = input.skills ?? readSkillCatalog(parsed);
  const skillWarnings = catalog.warnings.map(skillWarning);
  const visible = catalog.skills.filter((skill) => !skill.hidden);
  const section = formatSkillsSection(visible, { budget: parsed.skillsBudget });
  const omitted = visible.filter((skill) => section.omitted.includes(skill.name));
  const shortened = section.listed.filter((skill) => skill.shortened).length;
  if (shortened > 0 || omitted.length > 0) {
    skillWarnings.push({
      code: "SKILLS_OVER_BUDGET",
      message:
        `the skills listing is over its budget of ${section.budget} characters: ` +
        [
          ...(shortened > 0 ? [`${shortened} description${shortened === 1 ? "" : "s"} shortened`] : []),
          ...(omitted.length > 0 ? [`left out: ${omitted.map((skill) => skill.name).join(", ")}`] : []),
        ].join("; ") +
        ". Shorten descriptions, remove skills, or raise skills.budget in the manifest",
    });
  }
  for (const warning of skillWarnings) notifier.warn(warning);

  const scope = parsed.scope.toData();
  const context = {
    now: input.now,
    cwd: parsed.cwd,
    scope,
    // A pod registers load_skill when it has skills, so the prompt names it as the pod will have it.
    tools: [...new Set([...input.tools, ...(catalog.skills.length > 0 ? [LOAD_SKILL_TOOL] : [])])].sort(),
    ...(agents.text === undefined ? {} : { agentsMd: agents.text }),
  };
  let instruction: string;
  try {
    instruction = parsed.template.renderInstruction(context);
  } catch (error) {
    throw templateError(error, "SYSTEM_PROMPT_RENDER", parsed.template.instruction);
  }
  const boundaries = workingBoundaries(scope.summary, context.tools);
  const { prompt, sections: spans } = assembleSystemPromptWithSections({
    instruction,
    scopeSummary: boundaries,
    ...(section.text === undefined ? {} : { skills: section.text }),
    ...(agents.text === undefined ? {} : { agentsMd: agents.text }),
  });

  return {
    prompt,
    spans,
    tools: context.tools,
    sources: [
      ...parsed.template.sources,
      // sha256 stays a getter (read when the sources are recorded, never to print a prompt).
      ...catalog.skills.map(
        (skill): TemplateSource => ({
          ref: skillSourceRef(skill.name),
          file: skill.file,
          get sha256() {
            return skill.sha256;
          },
        }),
      ),
    ],
    sections: {
      instruction,
      workingBoundaries: boundaries,
      ...(section.text === undefined ? {} : { skills: section.text }),
      ...(agents.text === undefined ? {} : { agentsMd: agents.text }),
    },
    skills: {
      catalog: catalog.skills,
      listed: section.listed,
      hidden: catalog.skills.filter((skill) => skill.hidden),
      omitted,
      shadowed: catalog.shadowed,
      budget: section.budget,
      characters: section.characters,
    },
    ...(agents.text === undefined || agents.file === undefined
      ? {}
      : {
          agentsMd: {
            file: agents.file,
            bytes: agents.bytes,
            totalBytes: agents.totalBytes,
            truncated: agents.truncated,
          },
        }),
    warnings: [...agents.warnings, ...skillWarnings],
  };
}

function skillWarning(warning: SkillCatalog["warnings"][number]): PodWarning {
  return {
    code: warning.code,
    message: warning.message,
    ...(warning.file === undefined ? {} : { file: warning.file }),
    ...(warning.line === undefined ? {} : { line: warning.line }),
    ...(warning.column === undefined ? {} : { column: warning.column }),
  };
}

/** Options of {@link previewSystemPrompt}. */
export interface PreviewSystemPromptOptions extends ParsePodPromptOptions, Omit<RenderPodPromptInput, "tools"> {
  manifest: PodManifest;
  /** Tool names to render with, besides the names of the tools `toolFactories` make (as a pod would register them). */
  tools?: readonly string[];
  /** The pod's tool factories (`PodDeps.tools`), made with the pod's scope for their names. */
  toolFactories?: readonly PodToolFactory[];
}

/** What a pod in `manifest.pod.pwd` would send, without a running pod (the CLI's `pod prompt`). */
export async function previewSystemPrompt(options: PreviewSystemPromptOptions): Promise<RenderedPodPrompt> {
  const { manifest, now, loader, env, notifier, trustWorkspace } = options;
  const parsed = await parsePodPrompt(manifest, {
    ...(loader === undefined ? {} : { loader }),
    ...(env === undefined ? {} : { env }),
    ...(trustWorkspace === undefined ? {} : { trustWorkspace }),
  });
  const made = await makePodTools(options.toolFactories ?? [], { scope: parsed.scope, pwd: parsed.cwd });
  const tools = [...(options.tools ?? []), ...made.map((tool) => tool.name)];
  return renderPodPrompt(parsed, { tools, now, ...(notifier === undefined ? {} : { notifier }) });
}

/**
 * A repository controls `$workspace` (it can make `.insomnia/prompts` a symlink to anywhere),
 * so a `$workspace` file's real path must lie inside the workspace root — the same rule as
 * AGENTS.md: a repo must not be able to pull `~/.ssh/id_rsa` into a prompt, whatever its scope says.
 */
function checkWorkspaceSources(sources: readonly TemplateSource[], root: string): void {
  for (const source of sources) {
    if (!source.ref.startsWith("$workspace/")) continue;
    if (isSameOrInside(root, source.file)) continue;
    throw new PodError(
      "INVALID_SYSTEM_PROMPT_TEMPLATE",
      `its file ${source.file} is outside the workspace ${root}; ` +
        "workspace prompts must live inside the workspace (is .insomnia/prompts a symlink?) — move the file, or make it a $user prompt",
      { ref: source.ref, file: source.file },
    );
  }
}

/**
 * The pod's scope from the manifest's rules; a rule that cannot be resolved is INVALID_SCOPE,
 * reporting the ScopeError, which carries where the manifest set the rule (or `pod.pwd`).
 */
export function buildScope(manifest: PodManifest): Scope {
  const origins = manifestProvenance(manifest)?.origins ?? {};
  // A rule is named by its place in the merged manifest (`scope.allow[1]`); the base is pod.pwd,
  // the directory itself when no layer set it.
  const locate = (setting: string): ErrorLocation | undefined =>
    setting === "base"
      ? (origins["pod.pwd"] ?? { file: manifest.pod.pwd })
      : (origins[`${setting}.target`] ?? origins[`${setting}.permission`]);
  try {
    return Scope.fromConfig({ allow: manifest.scope.allow, deny: manifest.scope.deny }, manifest.pod.pwd, { locate });
  } catch (error) {
    if (!ScopeError.is(error)) throw error;
    throw new PodError("INVALID_SCOPE", `invalid scope for pod at ${manifest.pod.pwd}: ${error.detail}`, {
      cause: error,
      problems: error.problems,
    });
  }
}

/**
 * Maps a template (or loader) failure onto a PodError that reports the template's problems;
 * it repeats the template's position when the failure is inside a template file.
 */
function templateError(
  error: unknown,
  code: "INVALID_SYSTEM_PROMPT_TEMPLATE" | "SYSTEM_PROMPT_RENDER",
  instruction: string,
): unknown {
  if (!SystemPromptError.is(error) && !PromptLoaderError.is(error)) return error;
  const template = SystemPromptError.is(error) ? error : undefined;
  // An instruction that could not be loaded is located in the manifest (no `ref`): not a position in `instruction`.
  const inFile = template === undefined || template.ref !== undefined;
  return new PodError(code, error.detail, {
    cause: error,
    ref: error.ref ?? instruction,
    ...(inFile ? { file: error.file, line: template?.line, column: template?.column } : {}),
    messageSuffix: error.messageSuffix,
    problems: error.problems,
  });
}
