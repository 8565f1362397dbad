import { canonicalPath } from "./canonical-path.ts";
import { pathSegments, segmentsWithin } from "@insomnia/errors";
import { compileConfig } from "./scope-config.ts";
import type { CompiledRule, Permission, RulePermission, ScopeConfig } from "./scope-config.ts";
import { formatSummary } from "./summary.ts";
import type { SummaryEntry } from "./summary.ts";

/** Plain-value view of a scope, what @insomnia/template takes. */
export interface ScopeData {
  readonly readable: readonly string[];
  readonly writable: readonly string[];
  readonly summary: string;
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

  private constructor(config: ScopeConfig, base: string) {
    const compiled = compileConfig(config, base);
    this.base = compiled.base;
    this.#allow = compiled.allow;
    this.#deny = compiled.deny;

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

  /** Validates and canonicalizes the rules; `base` must be absolute. Throws ScopeError. */
  static fromConfig(config: ScopeConfig, base: string): Scope {
    return new Scope(config, base);
  }

  /**
   * Highest permission of matching allow rules, capped by matching deny rules.
   * A path that cannot be resolved (NUL byte, symlink loop, I/O error) gets "none".
   */
  permissionAt(path: string): Permission {
    let segments: readonly string[];
    try {
      segments = pathSegments(canonicalPath(path, this.base));
    } catch {
      return "none";
    }
    let granted: Rank = 0;
    for (const rule of this.#allow) {
      if (RANK[rule.permission] > granted && matches(rule, segments)) granted = RANK[rule.permission];
    }
    if (granted === 0) return "none";
    return BY_RANK[Math.min(granted, this.#denyCap(segments)) as Rank];
  }

  /** Whether `path` may be read. */
  isReadable(path: string): boolean {
    return this.permissionAt(path) !== "none";
  }

  /** Whether `path` may be written. */
  isWritable(path: string): boolean {
    return this.permissionAt(path) === "write";
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

function matches(rule: CompiledRule, segments: readonly string[]): boolean {
  return segmentsWithin(segments, rule.segments, rule.recursive ? Number.POSITIVE_INFINITY : 1);
}

function addEntry(entries: Map<string, SummaryEntry>, rule: CompiledRule): void {
  const seen = entries.get(rule.target);
  // A path listed twice is as reachable as its widest rule.
  entries.set(rule.target, { path: rule.target, recursive: rule.recursive || (seen?.recursive ?? false) });
}
