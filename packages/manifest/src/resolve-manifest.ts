import { basename, isAbsolute, join, resolve } from "node:path";
import { checkLayerValue } from "./check-layer.ts";
import {
  DEFAULT_COMPACT_AT,
  DEFAULT_COMPACT_INSTRUCTION,
  DEFAULT_INSTRUCTION,
  DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  DEFAULT_MCP_TOOL_TIMEOUT_MS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  DEFAULT_POD_NAME,
  DEFAULT_SKILLS_BUDGET,
  DEFAULT_RUN_COMMAND_TIMEOUT_MS,
  DEFAULT_TEMPERATURE,
  DEFAULT_WORKER_TOOLS,
} from "./defaults.ts";
import { type Issue, sortIssues, toManifestError } from "./issue.ts";
import { ManifestError } from "./manifest-error.ts";
import type { ManifestOrigins } from "./manifest-origins.ts";
import type { ManifestProvider, ManifestScopeRule, PartialManifest, PodManifest } from "./types.ts";

/** Options for resolveManifest. */
export interface ResolveManifestOptions {
  /** Directory the pod is started in; the default `pod.pwd`. */
  cwd: string;
  /** Where each value (and each section key, `provider`) came from: a problem found here is reported there. */
  origins?: ManifestOrigins | undefined;
  /** The user's home directory: a scope target `~` or `~/…` is resolved against it, as `provider.api_key_file` is. */
  home?: string | undefined;
}

/** Applies defaults (pwd, name, instruction, default allow rule), checks the result, deep-freezes it. */
export function resolveManifest(partial: PartialManifest, options: ResolveManifestOptions): PodManifest {
  return resolveManifestWith(partial, options, () => undefined);
}

/** resolveManifest that lets loadManifest attach its provenance before the manifest is frozen. */
export function resolveManifestWith(
  partial: PartialManifest,
  options: ResolveManifestOptions,
  beforeFreeze: (manifest: PodManifest) => void,
): PodManifest {
  // No layer set anything: only defaults apply, and there is nothing to check (nor a reason to load the validator).
  const checked = isEmptyObject(partial)
    ? { value: {} as PartialManifest, issues: [] }
    : checkLayerValue(partial, new Map());
  if (checked.value === undefined) throw resolveError(sortIssues(checked.issues)[0]!, options.origins);
  const layer = checked.value;

  const pwd = resolve(layer.pod?.pwd ?? options.cwd);
  const expand = (list: "allow" | "deny") => (rule: ManifestScopeRule, index: number) =>
    copyRule(rule, `scope.${list}[${index}]`, options);
  const allow: ManifestScopeRule[] = (layer.scope?.allow ?? []).map(expand("allow"));
  if (allow.length === 0) allow.push({ target: pwd, permission: "write", recursive: true });

  const manifest: PodManifest = {
    pod: { name: layer.pod?.name ?? (basename(pwd) || DEFAULT_POD_NAME), pwd },
    worker: {
      instruction: layer.worker?.instruction ?? DEFAULT_INSTRUCTION,
      max_tokens: layer.worker?.max_tokens ?? DEFAULT_MAX_TOKENS,
      max_turns: layer.worker?.max_turns ?? DEFAULT_MAX_TURNS,
      temperature: layer.worker?.temperature ?? DEFAULT_TEMPERATURE,
      tools: [...new Set(layer.worker?.tools ?? DEFAULT_WORKER_TOOLS)].sort(),
      compact_at: layer.worker?.compact_at ?? DEFAULT_COMPACT_AT,
      compact_instruction: layer.worker?.compact_instruction ?? DEFAULT_COMPACT_INSTRUCTION,
      run_command: {
        timeout_ms: layer.worker?.run_command?.timeout_ms ?? DEFAULT_RUN_COMMAND_TIMEOUT_MS,
        network: layer.worker?.run_command?.network ?? false,
      },
    },
    scope: { allow, deny: (layer.scope?.deny ?? []).map(expand("deny")) },
    ...(layer.provider === undefined ? {} : { provider: resolveProvider(layer.provider, options.origins) }),
    skills: { budget: layer.skills?.budget ?? DEFAULT_SKILLS_BUDGET },
    mcp_servers: Object.fromEntries(
      Object.entries(layer.mcp_servers ?? {}).map(([name, server]) => [
        name,
        {
          ...server,
          startup_timeout_ms: server.startup_timeout_ms ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS,
          tool_timeout_ms: server.tool_timeout_ms ?? DEFAULT_MCP_TOOL_TIMEOUT_MS,
        },
      ]),
    ),
  };
  beforeFreeze(manifest);
  return deepFreeze(manifest);
}

function resolveProvider(
  provider: NonNullable<PartialManifest["provider"]>,
  origins?: ManifestOrigins,
): ManifestProvider {
  // The block is incomplete as a whole: point at the (topmost) layer that set it.
  const block = origins?.provider;
  for (const key of ["kind", "model"] as const) {
    if (provider[key] === undefined) {
      throw new ManifestError(
        "INVALID_VALUE",
        `provider.${key} is required when a provider block is set; add it to a manifest layer or remove the provider block`,
        { key: `provider.${key}`, file: block?.file, line: block?.line, column: block?.column },
      );
    }
  }
  return {
    kind: provider.kind!,
    model: provider.model!,
    ...(provider.base_url === undefined ? {} : { base_url: provider.base_url }),
    ...(provider.api_key_file === undefined ? {} : { api_key_file: provider.api_key_file }),
    ...(provider.pricing === undefined ? {} : { pricing: { ...provider.pricing } }),
    ...(provider.context_window === undefined ? {} : { context_window: provider.context_window }),
    ...(provider.reasoning === undefined ? {} : { reasoning: provider.reasoning }),
  };
}

/** A problem of the merged manifest, reported at the value (or else the section) of the layer that set it. */
function resolveError(issue: Issue, origins: ManifestOrigins | undefined): ManifestError {
  const key = issue.key;
  const origin = key === undefined ? undefined : (origins?.[key] ?? origins?.[key.split(/[.[]/, 1)[0]!]);
  if (origin === undefined) return toManifestError(issue, undefined, "");
  return new ManifestError(issue.code, issue.detail, {
    ...origin,
    key,
    suggestion: issue.suggestion,
    cause: issue.original === undefined ? issue.cause : toManifestError(issue.original, undefined, ""),
  });
}

function copyRule(rule: ManifestScopeRule, location: string, options: ResolveManifestOptions): ManifestScopeRule {
  return {
    target: homeExpanded(rule.target, location, options),
    permission: rule.permission,
    ...(rule.recursive === undefined ? {} : { recursive: rule.recursive }),
  };
}

/**
 * `~` and `~/…` name the user's home (a shell habit; without this the rule would silently mean
 * `<pwd>/~/…`). `~user/…` is not expanded: it is refused, since it cannot mean a directory named so.
 */
function homeExpanded(target: string, location: string, options: ResolveManifestOptions): string {
  if (!target.startsWith("~")) return target;
  const origin = options.origins?.[`${location}.target`];
  const at = { key: `${location}.target`, file: origin?.file, line: origin?.line, column: origin?.column };
  if (target !== "~" && !target.startsWith("~/")) {
    throw new ManifestError(
      "INVALID_VALUE",
      `${location}.target "${target}": only ~ and ~/ (your home) are expanded, not ~user; write the absolute path`,
      at,
    );
  }
  const home = options.home;
  if (home === undefined || home === "" || !isAbsolute(home)) {
    throw new ManifestError(
      "INVALID_VALUE",
      `${location}.target "${target}" starts with ~ but no home directory is known (HOME is unset or relative); write the absolute path`,
      at,
    );
  }
  return target === "~" ? home : join(home, target.slice(2));
}

function isEmptyObject(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Reflect.ownKeys(value).length === 0;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
