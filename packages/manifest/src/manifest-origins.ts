import { lineColumn, lineLocator, pathKey } from "./issue.ts";
import type { PathSegments } from "./issue.ts";
import type { PositionedLayer } from "./parse-manifest-layer.ts";

/** Where a resolved value was written: the layer's display name and the 1-based position of the value. */
export interface ManifestOrigin {
  readonly file: string;
  readonly line: number;
  readonly column: number;
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
  file: string,
  rules: RuleCounts,
): void {
  const locate = lineLocator(layer.text);
  const at = (path: PathSegments, key: string) => {
    const position = layer.positions.get(pathKey(path));
    if (position === undefined) return;
    into[key] = Object.freeze({ file, ...locate(position.value) });
  };
  const { value } = layer;
  for (const section of ["pod", "worker", "provider", "skills"] as const) {
    for (const [key, entry] of Object.entries(value[section] ?? {})) {
      if (entry !== undefined) at([section, key], `${section}.${key}`);
    }
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
export function addSectionOrigins(into: Record<string, ManifestOrigin>, layer: PositionedLayer, file: string): void {
  for (const section of ["pod", "worker", "provider", "scope", "skills"] as const) {
    const position = layer.value[section] === undefined ? undefined : layer.positions.get(pathKey([section]));
    if (position !== undefined)
      into[section] = Object.freeze({ file, ...lineColumn(layer.text, position.key ?? position.value) });
  }
}
