import type { InferOutput } from "valibot";
import type { ManifestError } from "./manifest-error.ts";
import type { LayerSchema } from "./schema.ts";

// Every manifest type is derived from the valibot schema in schema.ts: a key added there is a
// key of these types, with no second copy to keep in step. Defaults live in defaults.ts.

/** `T` with every level readonly (arrays included), so values from one function go back into another. */
export type DeepReadonly<T> = T extends readonly (infer Item)[]
  ? readonly DeepReadonly<Item>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** Every key of `T` present and defined: a section after resolveManifest applied its defaults. */
type Resolved<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> };

/**
 * One layer as written (the schema's output): every key optional; scope rules accumulate on
 * merge. Readonly at every level, so a loaded `PodManifest` is a `PartialManifest` too.
 */
export type PartialManifest = DeepReadonly<InferOutput<LayerSchema>>;

type Section<K extends keyof PartialManifest> = NonNullable<PartialManifest[K]>;

/** One allow or deny rule as written in a manifest; relative targets are kept as written. */
export type ManifestScopeRule = NonNullable<Section<"scope">["allow"]>[number];

/** The optional `provider` block of a resolved manifest: `kind` and `model` are required once it is set. */
export type ManifestProvider = Resolved<Pick<Section<"provider">, "kind" | "model">> &
  Pick<Section<"provider">, "base_url" | "api_key_file" | "pricing" | "reasoning" | "context_window">;

/** `provider.pricing`: USD per million tokens, each price absent when the manifest does not set it. */
export type ManifestPricing = NonNullable<Section<"provider">["pricing"]>;

/** One `mcp_servers` entry as written. */
type WrittenMcpServer = NonNullable<Section<"mcp_servers">>[string];

/** One resolved `mcp_servers` entry: both timeouts set (defaults applied), the rest as written. */
export type ManifestMcpServer = Omit<WrittenMcpServer, "startup_timeout_ms" | "tool_timeout_ms"> &
  Resolved<Pick<WrittenMcpServer, "startup_timeout_ms" | "tool_timeout_ms">>;

/**
 * A fully resolved manifest (every key present, defaults applied). Keys are the YAML keys.
 * `worker.tools` is sorted without duplicates (`[]` for none). `skills` is always set by
 * `resolveManifest`; it is optional so a manifest built by hand without it still type-checks
 * (absent: `DEFAULT_SKILLS_BUDGET`).
 */
export interface PodManifest {
  readonly pod: Resolved<Section<"pod">>;
  readonly worker: Resolved<Omit<Section<"worker">, "run_command" | "compact_at" | "compact_instruction">> & {
    /**
     * `worker.compact_at`: the fraction of the context window at which the pod compacts (0.5–0.95).
     * Always set by `resolveManifest`; optional so a manifest built by hand still type-checks (absent: 0.8).
     */
    readonly compact_at?: number;
    /** `worker.compact_instruction`: the prompt a compaction asks for its summary with (absent: `$insomnia/compact`). */
    readonly compact_instruction?: string;
    /**
     * `worker.run_command`, defaults applied: the longest a command may run, and whether it
     * reaches the network. Always set by `resolveManifest`; optional so a manifest built by
     * hand without it still type-checks (absent: 120,000 ms, no network).
     */
    readonly run_command?: Resolved<NonNullable<Section<"worker">["run_command"]>>;
  };
  readonly scope: Resolved<Section<"scope">>;
  readonly provider?: ManifestProvider;
  readonly skills?: Resolved<Section<"skills">>;
  /** MCP servers by name (`{}` when none; optional like `skills` for hand-built manifests). */
  readonly mcp_servers?: Readonly<Record<string, ManifestMcpServer>>;
}

/** Outcome of validating one layer or overlay: the layer, or every problem found. */
export type ManifestLayerResult = { ok: true; value: PartialManifest } | { ok: false; issues: ManifestError[] };
