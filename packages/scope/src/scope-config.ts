import { errorText } from "@insomnia/errors";
import * as path from "node:path";
import { canonicalPath } from "./canonical-path.ts";
import { pathSegments } from "@insomnia/safe-read";
import { ScopeError } from "./scope-error.ts";

/** What a rule grants (allow) or takes away (deny). */
export type RulePermission = "read" | "write";

/** Effective permission at a path. */
export type Permission = "none" | "read" | "write";

/** One allow or deny rule. */
export interface ScopeRule {
  /** Absolute, or relative to the scope's base. */
  target: string;
  permission: RulePermission;
  /** Whole subtree (default) or the target and its direct children only. */
  recursive?: boolean | undefined;
}

/** The rules of a scope, as written in a manifest. */
export interface ScopeConfig {
  allow: readonly ScopeRule[];
  deny?: readonly ScopeRule[] | undefined;
}

/** A validated rule with its target made canonical. */
export interface CompiledRule {
  /** Config location, e.g. `scope.allow[2]`. */
  readonly location: string;
  readonly target: string;
  readonly segments: readonly string[];
  readonly permission: RulePermission;
  readonly recursive: boolean;
}

/** Validated, canonical form of a config. */
export interface CompiledConfig {
  readonly base: string;
  readonly allow: readonly CompiledRule[];
  readonly deny: readonly CompiledRule[];
}

/** Checks `config` and `base` and canonicalizes every target; throws ScopeError. */
export function compileConfig(config: ScopeConfig, base: string): CompiledConfig {
  const canonicalBase = compileBase(base);
  const raw: unknown = config;
  const allow = isRecord(raw) ? raw["allow"] : undefined;
  if (!Array.isArray(allow) || allow.length === 0) {
    throw new ScopeError(
      "NO_ALLOW_RULE",
      'scope.allow must list at least one rule; add e.g. { target: ".", permission: "read" }.',
      { rule: "scope.allow" },
    );
  }
  const deny = isRecord(raw) ? raw["deny"] : undefined;
  if (deny !== undefined && !Array.isArray(deny)) {
    throw new ScopeError("INVALID_RULE", "scope.deny: must be a list of rules; write deny: [] or remove it.", {
      rule: "scope.deny",
    });
  }
  return {
    base: canonicalBase,
    allow: allow.map((rule: unknown, i) => compileRule(rule, `scope.allow[${i}]`, canonicalBase)),
    deny: (deny ?? []).map((rule: unknown, i) => compileRule(rule, `scope.deny[${i}]`, canonicalBase)),
  };
}

function compileBase(base: unknown): string {
  if (typeof base !== "string" || base.includes("\0") || !path.isAbsolute(base)) {
    throw new ScopeError(
      "INVALID_BASE",
      `scope base ${JSON.stringify(base)} is not an absolute path; pass the pod's absolute working directory.`,
      typeof base === "string" ? { path: base } : {},
    );
  }
  try {
    return canonicalPath(base);
  } catch (cause) {
    throw new ScopeError("INVALID_BASE", `scope base ${base} cannot be resolved: ${errorText(cause)}`, {
      cause,
      path: base,
    });
  }
}

function compileRule(rule: unknown, location: string, base: string): CompiledRule {
  const invalid = (what: string, cause?: unknown): ScopeError =>
    new ScopeError(
      "INVALID_RULE",
      `${location}: ${what}`,
      cause === undefined ? { rule: location } : { rule: location, cause },
    );
  if (!isRecord(rule)) throw invalid("must be an object with target and permission.");
  const { target, permission, recursive } = rule;
  if (typeof target !== "string" || target === "") {
    throw invalid(
      `target must be a non-empty path, got ${describe(target)}; use an absolute path or one relative to ${base}.`,
    );
  }
  if (target.includes("\0")) throw invalid(`target ${JSON.stringify(target)} contains a NUL byte; remove it.`);
  if (permission !== "read" && permission !== "write") {
    throw invalid(`permission must be "read" or "write", got ${describe(permission)}.`);
  }
  if (recursive !== undefined && typeof recursive !== "boolean") {
    throw invalid(`recursive must be true or false, got ${describe(recursive)}.`);
  }
  let canonical: string;
  try {
    canonical = canonicalPath(target, base);
  } catch (cause) {
    throw invalid(`target ${JSON.stringify(target)} cannot be resolved: ${errorText(cause)}`, cause);
  }
  return {
    location,
    target: canonical,
    segments: pathSegments(canonical),
    permission,
    recursive: recursive ?? true,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return JSON.stringify(value);
  return typeof value === "object" && value !== null ? (Array.isArray(value) ? "a list" : "an object") : String(value);
}
