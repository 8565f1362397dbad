import { isAbsolute, sep } from "node:path";
import { canonicalPath } from "./canonical-path.ts";
import { pathSegments, segmentsWithin } from "@insomnia/safe-read";
import { compileConfig } from "./scope-config.ts";
import type { CompiledRule, Permission, RulePermission, ScopeConfig } from "./scope-config.ts";
import { ScopeError } from "./scope-error.ts";
import { formatSummary } from "./summary.ts";
import type { SummaryEntry } from "./summary.ts";
import type { ErrorLocation } from "@insomnia/errors";

/** Options of {@link Scope.fromConfig}. */
export interface ScopeOptions {
  /**
   * Where the caller wrote a setting: `"base"`, or a rule's place in the config such as
   * `"scope.allow[1]"` (a ScopeError's `rule`). A ScopeError about it carries that location,
   * so a manifest's user is shown the line they wrote.
   */
  locate?: ((setting: string) => ErrorLocation | undefined) | undefined;
}

/** Plain-value view of a scope, what @insomnia/template takes. */
export interface ScopeData {
  readonly readable: readonly string[];
  readonly writable: readonly string[];
  readonly summary: string;
}

/** A rule as {@link Scope.explain} names it: where it is in the config, and what it says. */
export interface ScopeRuleRef {
  /** Config location, e.g. `scope.allow[2]` or `scope.deny[0]`. */
  readonly location: string;
  /** Canonical target. */
  readonly target: string;
  readonly permission: RulePermission;
  readonly recursive: boolean;
}

/** The rules of a scope as {@link Scope.rules} lists them. */
export interface ScopeRules {
  readonly allow: readonly ScopeRuleRef[];
  readonly deny: readonly ScopeRuleRef[];
}

/** What {@link Scope.explain} answers. */
export interface PermissionExplanation {
  /** The canonical path the query resolved to; absent when it could not be resolved. */
  readonly path?: string;
  readonly permission: Permission;
  /** The allow rule that granted the most; absent when none matches. */
  readonly allow?: ScopeRuleRef;
  /** The deny rule that lowered the permission; absent when none did. */
  readonly deny?: ScopeRuleRef;
}

/** Options of {@link Scope.explain}. */
export interface ExplainOptions {
  /** The path is absolute and canonical already: match it without resolving it again. */
  readonly resolved?: boolean | undefined;
}

const RANK = { none: 0, read: 1, write: 2 } as const satisfies Record<Permission, number>;
const BY_RANK = ["none", "read", "write"] as const satisfies readonly Permission[];
type Rank = 0 | 1 | 2;
/** Denying read takes everything; denying write leaves read. */
const DENY_CAP = { read: 0, write: 1 } as const satisfies Record<RulePermission, Rank>;

/** The security boundary of a pod: which paths it may read and write. */
export class Scope {
  /** Canonical form of the base that relative targets and queries resolve against. */
  readonly base: string;
  /** Canonical targets of allow rules that grant read (or more), declaration order, no duplicates. */
  readonly readable: readonly string[];
  /** Canonical targets of allow rules that grant write, declaration order, no duplicates. */
  readonly writable: readonly string[];
  readonly #allow: readonly CompiledRule[];
  readonly #deny: readonly CompiledRule[];
  readonly #data: ScopeData;
  readonly #rules: ScopeRules;

  private constructor(config: ScopeConfig, base: string) {
    const compiled = compileConfig(config, base);
    this.base = compiled.base;
    this.#allow = compiled.allow;
    this.#deny = compiled.deny;
    this.#rules = Object.freeze({
      allow: Object.freeze(this.#allow.map((rule) => Object.freeze(ruleRef(rule)))),
      deny: Object.freeze(this.#deny.map((rule) => Object.freeze(ruleRef(rule)))),
    });

    const readable = new Map<string, SummaryEntry>();
    const writable = new Map<string, SummaryEntry>();
    for (const rule of this.#allow) {
      const effective = Math.min(RANK[rule.permission], this.#denyCap(rule.segments));
      if (effective >= RANK.read) addEntry(readable, rule);
      if (effective >= RANK.write) addEntry(writable, rule);
    }
    this.readable = Object.freeze([...readable.keys()]);
    this.writable = Object.freeze([...writable.keys()]);
    this.#data = Object.freeze({
      readable: this.readable,
      writable: this.writable,
      summary: formatSummary([...readable.values()], [...writable.values()]),
    });
  }

  /** Validates and canonicalizes the rules; `base` must be absolute. Throws ScopeError, located by `options.locate`. */
  static fromConfig(config: ScopeConfig, base: string, options: ScopeOptions = {}): Scope {
    try {
      return new Scope(config, base);
    } catch (error) {
      const at = ScopeError.is(error) ? options.locate?.(error.rule ?? "base") : undefined;
      if (at === undefined) throw error;
      const { code, detail, cause, rule, path } = error as ScopeError;
      throw new ScopeError(code, detail, { cause, rule, path, file: at.file, line: at.line, column: at.column });
    }
  }

  /**
   * Highest permission of matching allow rules, capped by matching deny rules.
   * A path that cannot be resolved (NUL byte, symlink loop, I/O error) gets "none".
   */
  permissionAt(path: string): Permission {
    return this.explain(path).permission;
  }

  /**
   * The permission at `path` with the rules that decided it: the canonical path, the
   * allow rule that granted the most (first declared on a tie) and the deny rule that
   * capped it (the first one that capped it most). Never throws; `path` is undefined when
   * the query cannot be resolved. With `resolved`, `path` is taken as already canonical (a
   * path the kernel reported for an open descriptor) and matched as it is, without touching
   * the file system; a relative path or one with `.`/`..` segments is then "none".
   */
  explain(path: string, options: ExplainOptions = {}): PermissionExplanation {
    let canonical: string;
    let segments: readonly string[];
    try {
      if (options.resolved === true) {
        canonical = path;
        segments = resolvedSegments(path);
      } else {
        canonical = canonicalPath(path, this.base);
        segments = pathSegments(canonical);
      }
    } catch {
      return { permission: "none" };
    }
    let granted: Rank = 0;
    let allow: CompiledRule | undefined;
    for (const rule of this.#allow) {
      if (RANK[rule.permission] > granted && matches(rule, segments)) {
        granted = RANK[rule.permission];
        allow = rule;
      }
    }
    if (allow === undefined) return { path: canonical, permission: "none" };
    let cap: Rank = 2;
    let deny: CompiledRule | undefined;
    for (const rule of this.#deny) {
      if (DENY_CAP[rule.permission] >= Math.min(cap, granted) || !matches(rule, segments)) continue;
      cap = DENY_CAP[rule.permission];
      deny = rule;
      if (cap === 0) break;
    }
    const permission = BY_RANK[Math.min(granted, cap) as Rank];
    return deny === undefined
      ? { path: canonical, permission, allow: ruleRef(allow) }
      : { path: canonical, permission, allow: ruleRef(allow), deny: ruleRef(deny) };
  }

  /** Whether `path` may be read. */
  isReadable(path: string): boolean {
    return this.permissionAt(path) !== "none";
  }

  /** Whether `path` may be written. */
  isWritable(path: string): boolean {
    return this.permissionAt(path) === "write";
  }

  /** Every allow and deny rule, canonical, in declaration order: what a sandbox mirrors with mounts. */
  rules(): ScopeRules {
    return this.#rules;
  }

  /** The text shown to the model (see README for the format). */
  summary(): string {
    return this.#data.summary;
  }

  /** Frozen plain values for templates: { readable, writable, summary }. */
  toData(): ScopeData {
    return this.#data;
  }

  /** Highest rank the deny rules matching `segments` leave. */
  #denyCap(segments: readonly string[]): Rank {
    let cap: Rank = 2;
    for (const rule of this.#deny) {
      if (!matches(rule, segments)) continue;
      cap = Math.min(cap, DENY_CAP[rule.permission]) as Rank;
      if (cap === 0) break;
    }
    return cap;
  }
}

/**
 * The segments of a path given as canonical (`explain`'s `resolved`): absolute, no NUL, no `.`
 * or `..` segment, or it throws. Such a path needs no normalizing: on POSIX its segments are its
 * non-empty parts after the root, which is what `pathSegments` would return for it.
 */
export function resolvedSegments(path: string): readonly string[] {
  if (typeof path !== "string" || path.includes("\0") || !isAbsolute(path)) throw new Error("not a resolved path");
  const parts = path.split(sep);
  const segments = ["/"];
  for (const part of parts) {
    if (part === "." || part === "..") throw new Error("not a resolved path");
    if (part !== "") segments.push(part);
  }
  return sep === "/" ? segments : pathSegments(path);
}

function ruleRef(rule: CompiledRule): ScopeRuleRef {
  return { location: rule.location, target: rule.target, permission: rule.permission, recursive: rule.recursive };
}

function matches(rule: CompiledRule, segments: readonly string[]): boolean {
  return segmentsWithin(segments, rule.segments, rule.recursive ? Number.POSITIVE_INFINITY : 1);
}

function addEntry(entries: Map<string, SummaryEntry>, rule: CompiledRule): void {
  const seen = entries.get(rule.target);
  // A path listed twice is as reachable as its widest rule.
  entries.set(rule.target, { path: rule.target, recursive: rule.recursive || (seen?.recursive ?? false) });
}
