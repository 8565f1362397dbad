import { isSameOrInside } from "@insomnia/errors";
import type { PodManifest } from "@insomnia/manifest";
import { PromptLoader, PromptLoaderError } from "@insomnia/prompt-loader";
import { Scope, ScopeError } from "@insomnia/scope";
import { assembleSystemPrompt, SystemPromptError, SystemPromptTemplate } from "@insomnia/template";
import type { TemplateSource } from "@insomnia/template";
import { readAgentsMd } from "./agents-md.ts";
import { PodError } from "./pod-error.ts";
import { silentNotifier } from "./pod-warning.ts";
import type { Notifier, PodWarning } from "./pod-warning.ts";

/** A pod's instruction, parsed and checked, waiting for its one render. */
export interface PreparedSystemPrompt {
  /** The pod's absolute working directory (`manifest.pod.pwd`). */
  readonly cwd: string;
  readonly scope: Scope;
  readonly template: SystemPromptTemplate;
}

/** Options of {@link prepareSystemPrompt}. */
export interface PrepareOptions {
  /** Default: `PromptLoader.forPod({ cwd: manifest.pod.pwd, env })`. */
  loader?: PromptLoader;
  /** Environment for the default loader's `$user` root (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** What goes into a render besides the parsed instruction. */
export interface MaterializeInput {
  /** Tool names; sorted here. */
  tools: readonly string[];
  now: Date;
  notifier?: Notifier;
}

/** A system prompt as a pod sends it, with the parts it was made of. */
export interface MaterializedPrompt {
  /** The full system prompt, byte for byte what the worker receives. */
  prompt: string;
  /** Every file the instruction was built from, root first. */
  sources: readonly TemplateSource[];
  sections: { instruction: string; workingBoundaries: string; agentsMd?: string };
  agentsMd?: { file: string; bytes: number; totalBytes: number; truncated: boolean };
  warnings: readonly PodWarning[];
}

/** Builds the scope and parses the instruction with all its includes; renders nothing. */
export async function prepareSystemPrompt(
  manifest: PodManifest,
  options: PrepareOptions = {},
): Promise<PreparedSystemPrompt> {
  const cwd = manifest.pod.pwd;
  const scope = buildScope(manifest);
  const loader = options.loader ?? PromptLoader.forPod({ cwd, env: options.env ?? process.env });
  let template: SystemPromptTemplate;
  try {
    template = await SystemPromptTemplate.parse(manifest.worker.instruction, loader);
  } catch (error) {
    throw templateError(error, "INVALID_SYSTEM_PROMPT_TEMPLATE", manifest.worker.instruction);
  }
  checkWorkspaceSources(template.sources, scope);
  return { cwd, scope, template };
}

/** Renders a prepared instruction with the time, the tools and `<cwd>/AGENTS.md` into the final prompt. */
export async function materialize(
  prepared: PreparedSystemPrompt,
  input: MaterializeInput,
): Promise<MaterializedPrompt> {
  const notifier = input.notifier ?? silentNotifier;
  const agents = await readAgentsMd(prepared.cwd, prepared.scope);
  for (const warning of agents.warnings) notifier.warn(warning);

  const scope = prepared.scope.toData();
  const context = {
    now: input.now,
    cwd: prepared.cwd,
    scope,
    tools: [...input.tools].sort(),
    ...(agents.text === undefined ? {} : { agentsMd: agents.text }),
  };
  let instruction: string;
  try {
    instruction = prepared.template.renderInstruction(context);
  } catch (error) {
    throw templateError(error, "SYSTEM_PROMPT_RENDER", prepared.template.instruction);
  }
  const prompt = assembleSystemPrompt({
    instruction,
    scopeSummary: scope.summary,
    ...(agents.text === undefined ? {} : { agentsMd: agents.text }),
  });

  return {
    prompt,
    sources: prepared.template.sources,
    sections: {
      instruction,
      workingBoundaries: scope.summary,
      ...(agents.text === undefined ? {} : { agentsMd: agents.text }),
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
    warnings: agents.warnings,
  };
}

/** Options of {@link materializeSystemPrompt}. */
export interface MaterializeSystemPromptOptions extends PrepareOptions, MaterializeInput {
  manifest: PodManifest;
}

/** What a pod in `manifest.pod.pwd` would send, without a running pod (the CLI's `pod prompt`). */
export async function materializeSystemPrompt(options: MaterializeSystemPromptOptions): Promise<MaterializedPrompt> {
  const { manifest, tools, now, loader, env, notifier } = options;
  const prepared = await prepareSystemPrompt(manifest, {
    ...(loader === undefined ? {} : { loader }),
    ...(env === undefined ? {} : { env }),
  });
  return materialize(prepared, { tools, now, ...(notifier === undefined ? {} : { notifier }) });
}

/**
 * A repository controls `$workspace` (it can make `.insomnia/prompts` a symlink to anywhere),
 * so a `$workspace` file must lie inside the pod's directory or its readable scope — the
 * same rule as AGENTS.md: a repo must not be able to pull `~/.ssh/id_rsa` into a prompt.
 */
function checkWorkspaceSources(sources: readonly TemplateSource[], scope: Scope): void {
  for (const source of sources) {
    if (!source.ref.startsWith("$workspace/")) continue;
    if (isSameOrInside(scope.base, source.file) || scope.isReadable(source.file)) continue;
    throw new PodError(
      "INVALID_SYSTEM_PROMPT_TEMPLATE",
      `its file ${source.file} is outside the pod's directory ${scope.base} and its readable scope; ` +
        "workspace prompts must live inside the pod (is .insomnia/prompts a symlink?) — move the file, or add its directory to scope.allow",
      { ref: source.ref, file: source.file },
    );
  }
}

function buildScope(manifest: PodManifest): Scope {
  try {
    return Scope.fromConfig({ allow: manifest.scope.allow, deny: manifest.scope.deny }, manifest.pod.pwd);
  } catch (error) {
    if (!ScopeError.is(error)) throw error;
    throw new PodError("INVALID_SCOPE", `invalid scope for pod at ${manifest.pod.pwd}: ${error.detail}`, {
      cause: error,
    });
  }
}

/** Maps a template (or loader) failure onto a PodError, copying its position. */
function templateError(
  error: unknown,
  code: "INVALID_SYSTEM_PROMPT_TEMPLATE" | "SYSTEM_PROMPT_RENDER",
  instruction: string,
): unknown {
  if (!SystemPromptError.is(error) && !PromptLoaderError.is(error)) return error;
  const line = SystemPromptError.is(error) ? error.line : undefined;
  const column = SystemPromptError.is(error) ? error.column : undefined;
  const ref = error.ref ?? instruction;
  return new PodError(code, error.detail, {
    cause: error,
    ref,
    file: error.file,
    line,
    column,
    messageSuffix: error.messageSuffix,
  });
}
