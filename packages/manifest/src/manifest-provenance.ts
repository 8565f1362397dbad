import type { ManifestLayerInfo, ManifestOrigins } from "./manifest-origins.ts";
import type { PodManifest } from "./types.ts";

/** Where a loaded manifest came from: the workspace it was loaded in, its layers, and each value's origin. */
export interface ManifestProvenance {
  /** The workspace root: the directory holding the `.insomnia/` found from the cwd, or the cwd. */
  readonly root: string;
  /** True when a `.insomnia/` directory was found. */
  readonly found: boolean;
  /** The layers read, lowest first. */
  readonly layers: readonly ManifestLayerInfo[];
  /** Where each value came from (see {@link ManifestOrigins}), with its layer and whether that layer is trusted. */
  readonly origins: ManifestOrigins;
}

// Symbol.for: a manifest loaded by one copy of this package is understood by another.
const PROVENANCE = Symbol.for("insomnia.manifest.provenance");

/** Attaches provenance to a manifest before it is frozen (not enumerable: JSON and spreads leave it out). */
export function attachProvenance(manifest: object, provenance: ManifestProvenance): void {
  Object.defineProperty(manifest, PROVENANCE, { value: Object.freeze(provenance), enumerable: false });
}

/**
 * The provenance loadManifest attached to `manifest`; undefined for a manifest built by hand
 * (or copied), whose values are the caller's own and so trusted.
 */
export function manifestProvenance(manifest: PodManifest): ManifestProvenance | undefined {
  const value: unknown = (manifest as unknown as Record<symbol, unknown>)[PROVENANCE];
  return value === undefined ? undefined : (value as ManifestProvenance);
}
