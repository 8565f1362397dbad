import { resolve } from "node:path";
import { PROJECT_MANIFEST_PATH } from "./defaults.ts";
import { projectManifestPath, userManifestPath } from "./manifest-paths.ts";
import { merge } from "./merge.ts";
import { addLayerOrigins, addSectionOrigins } from "./manifest-origins.ts";
import type { ManifestOrigin, ManifestOrigins } from "./manifest-origins.ts";
import { parsePositionedLayer } from "./parse-manifest-layer.ts";
import type { PositionedLayer } from "./parse-manifest-layer.ts";
import { parsePositionedOverlay } from "./parse-overlay.ts";
import { readManifestFile } from "./read-manifest-file.ts";
import { resolveManifest } from "./resolve-manifest.ts";
import type { PartialManifest, PodManifest } from "./types.ts";

/** Options for loadManifest. */
export interface LoadManifestOptions {
  /** Directory the pod is started in: default pwd, and where `.insomnia/pod.yaml` is looked for. */
  cwd: string;
  /** XDG_CONFIG_HOME and HOME are read from here (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Replaces `<cwd>/.insomnia/pod.yaml` (the CLI's --manifest); relative to cwd; must exist. */
  manifestFile?: string | undefined;
  /** Overlay expressions, applied in order above every file: `worker.instruction = "$user/foo"`. */
  overlays?: readonly string[] | undefined;
  /** Read the user layer (default true). */
  userLayer?: boolean | undefined;
}

/** The resolved manifest and the layer files actually read. */
export interface LoadedManifest {
  manifest: PodManifest;
  /** Absolute paths of the layer files read, lowest first. */
  files: string[];
  /**
   * Where each value set by a layer came from, by dotted key (`worker.instruction`,
   * `scope.allow[0].target`): the position of the value in the layer that won, with `file`
   * named as errors name it. Keys left to their defaults have no entry.
   */
  origins: ManifestOrigins;
}

/** Reads, validates and merges every layer (user, project, overlays) into a resolved manifest; throws ManifestError. */
export async function loadManifest(options: LoadManifestOptions): Promise<LoadedManifest> {
  const cwd = resolve(options.cwd);
  const layers: PartialManifest[] = [];
  const files: string[] = [];
  const origins: Record<string, ManifestOrigin> = {};
  const sections: Record<string, ManifestOrigin> = {};
  const rules = { allow: 0, deny: 0 };
  const add = (layer: PositionedLayer, display: string) => {
    layers.push(layer.value);
    addLayerOrigins(origins, layer, display, rules);
    addSectionOrigins(sections, layer, display);
  };

  const userPath = options.userLayer === false ? undefined : userManifestPath(options.env ?? process.env);
  if (userPath !== undefined) {
    const path = userPath;
    const text = await readManifestFile(path, { optional: true });
    if (text !== undefined) {
      add(parsePositionedLayer(text, path), path);
      files.push(path);
    }
  }

  const explicit = options.manifestFile !== undefined;
  const projectPath = explicit ? resolve(cwd, options.manifestFile!) : projectManifestPath(cwd);
  const display = explicit ? options.manifestFile! : PROJECT_MANIFEST_PATH;
  const projectText = await readManifestFile(projectPath, { display, optional: !explicit });
  if (projectText !== undefined) {
    add(parsePositionedLayer(projectText, display), display);
    files.push(projectPath);
  }

  const overlays = options.overlays ?? [];
  overlays.forEach((expression, index) => {
    const display = overlays.length === 1 ? "--overlay" : `<overlay ${index + 1}>`;
    add(parsePositionedOverlay(expression, display), display);
  });

  const frozen = Object.freeze(origins);
  const home = (options.env ?? process.env).HOME;
  const manifest = resolveManifest(merge(...layers), { cwd, origins: { ...sections, ...frozen }, home });
  return { manifest, files, origins: frozen };
}
