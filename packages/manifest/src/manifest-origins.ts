import { lineColumn, lineLocator, type PathSegments, pathKey } from "@insomnia/safe-yaml";
import type { PositionedLayer } from "./parse-manifest-layer.ts";

/**
 * Which layer a value came from: the user's config file, the workspace's `.insomnia/pod.yaml`
 * (from a checkout the user may not have written), a `--manifest` file, or an overlay.
 */
export type ManifestLayerKind = "user" | "workspace" | "manifest" | "overlay";

/** One layer as loadManifest read it: its kind, file and whether its values may widen what the pod can do. */
export interface ManifestLayerInfo {
  readonly layer: ManifestLayerKind;
  /** The layer's name as errors show it (`.insomnia/pod.yaml`, `--overlay`, an absolute path). */
  readonly file: string;
  /** Absolute path of the layer file; absent for an overlay. */
  readonly path?: string;
  /** False for a workspace layer (or a `--manifest` file inside the workspace) the user has not trusted. */
  readonly trusted: boolean;
}

/**
 * Where a resolved value was written: the layer's display name, the 1-based position of the
 * value, and (for values loadManifest read) which layer that was and whether it is trusted.
 */
export interface ManifestOrigin {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Kind of the layer; absent in origins built by hand (treated as the caller's own, trusted). */
  readonly layer?: ManifestLayerKind;
  /** Absolute path of the layer file (absent for overlays and hand-built origins). */
  readonly path?: string;
  /** Whether the layer may widen what the pod can do; absent means trusted (the caller's own value). */
  readonly trusted?: boolean;
}

/** Origins by dotted key ("worker.instruction", "scope.allow[1].target"); defaulted keys are absent. */
export type ManifestOrigins = Readonly<Record<string, ManifestOrigin>>;

/** Scope rules already merged from lower layers; this layer's rules are numbered after them. */
export interface RuleCounts {
  allow: number;
  deny: number;
}

/** Records the origin of every scalar `layer` sets into `into` (upper layers overwrite), and counts its rules. */
export function addLayerOrigins(
  into: Record<string, ManifestOrigin>,
  layer: PositionedLayer,
  info: ManifestLayerInfo,
  rules: RuleCounts,
): void {
  const locate = lineLocator(layer.text);
  const at = (path: PathSegments, key: string) => {
    const position = layer.positions.get(pathKey(path));
    if (position === undefined) return;
    into[key] = Object.freeze({ ...originBase(info), ...locate(position.value) });
  };
  const { value } = layer;
  // Every key of every section but scope, nested mappings too (`worker.run_command.network`), so a
  // key added later has its origin (and so its layer and trust) without a change here.
  const walk = (entries: Record<string, unknown>, path: string[]) => {
    for (const [key, entry] of Object.entries(entries)) {
      if (entry === undefined) continue;
      at([...path, key], [...path, key].join("."));
      if (entry !== null && typeof entry === "object" && !Array.isArray(entry))
        walk(entry as Record<string, unknown>, [...path, key]);
    }
  };
  for (const [section, entries] of Object.entries(value)) {
    if (section === "scope" || entries === null || typeof entries !== "object" || Array.isArray(entries)) continue;
    walk(entries as Record<string, unknown>, [section]);
  }
  for (const list of ["allow", "deny"] as const) {
    const layerRules = value.scope?.[list] ?? [];
    layerRules.forEach((rule, index) => {
      for (const [field, entry] of Object.entries(rule)) {
        if (entry !== undefined) at(["scope", list, index, field], `scope.${list}[${rules[list] + index}].${field}`);
      }
    });
    rules[list] += layerRules.length;
  }
}

/**
 * Records where `layer` writes each section's key (`provider`, `scope`, …), upper layers
 * overwriting: a problem with a whole block (a provider without a model) points at the layer that set it.
 */
export function addSectionOrigins(
  into: Record<string, ManifestOrigin>,
  layer: PositionedLayer,
  info: ManifestLayerInfo,
): void {
  for (const section of Object.keys(layer.value)) {
    const position =
      (layer.value as Record<string, unknown>)[section] === undefined
        ? undefined
        : layer.positions.get(pathKey([section]));
    if (position !== undefined)
      into[section] = Object.freeze({ ...originBase(info), ...lineColumn(layer.text, position.key ?? position.value) });
  }
}

function originBase(info: ManifestLayerInfo): Omit<ManifestOrigin, "line" | "column"> {
  return {
    file: info.file,
    layer: info.layer,
    ...(info.path === undefined ? {} : { path: info.path }),
    trusted: info.trusted,
  };
}
