import type { ManifestError } from "./manifest-error.ts";

/** One allow or deny rule as written in a manifest; relative targets are kept as written. */
export interface ManifestScopeRule {
  target: string;
  permission: "read" | "write";
  recursive?: boolean;
}

/** The optional `provider` block of a resolved manifest. */
export interface ManifestProvider {
  kind: string;
  model: string;
  base_url?: string;
  api_key_file?: string;
}

/** A fully resolved manifest (every key present, defaults applied). Keys are the YAML keys. */
export interface PodManifest {
  readonly pod: { readonly name: string; readonly pwd: string };
  readonly worker: {
    readonly instruction: string;
    readonly max_tokens: number;
    readonly max_turns: number;
    readonly temperature: number;
    /** Names of the tools the pod registers (sorted, no duplicates); `[]` for none. */
    readonly tools: readonly string[];
  };
  readonly scope: {
    readonly allow: readonly Readonly<ManifestScopeRule>[];
    readonly deny: readonly Readonly<ManifestScopeRule>[];
  };
  readonly provider?: Readonly<ManifestProvider>;
  /**
   * The skills catalog's settings. Always set by `resolveManifest`; optional in the type so a
   * manifest built by hand without it still type-checks (absent: `DEFAULT_SKILLS_BUDGET`).
   */
  readonly skills?: { readonly budget: number };
}

/** One layer as written: every key optional; scope rules accumulate on merge. */
export interface PartialManifest {
  pod?: { name?: string; pwd?: string };
  worker?: { instruction?: string; max_tokens?: number; max_turns?: number; temperature?: number; tools?: string[] };
  scope?: { allow?: ManifestScopeRule[]; deny?: ManifestScopeRule[] };
  provider?: { kind?: string; model?: string; base_url?: string; api_key_file?: string };
  skills?: { budget?: number };
}

/** Outcome of validating one layer or overlay: the layer, or every problem found. */
export type ManifestLayerResult = { ok: true; value: PartialManifest } | { ok: false; issues: ManifestError[] };
