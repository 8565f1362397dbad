import { relative, resolve } from "node:path";
import { isSameOrInside } from "@insomnia/safe-read";
import { findWorkspace } from "./find-workspace.ts";
import { addLayerOrigins, addSectionOrigins } from "./manifest-origins.ts";
import type { ManifestLayerInfo, ManifestOrigin, ManifestOrigins } from "./manifest-origins.ts";
import { projectManifestPath, userManifestPath } from "./manifest-paths.ts";
import { attachProvenance } from "./manifest-provenance.ts";
import { merge } from "./merge.ts";
import { parsePositionedLayer } from "./parse-manifest-layer.ts";
import type { PositionedLayer } from "./parse-manifest-layer.ts";
import { parsePositionedOverlay } from "./parse-overlay.ts";
import { readManifestFile } from "./read-manifest-file.ts";
import { resolveManifestWith } from "./resolve-manifest.ts";
import { isLayerTrusted, realDirectory } from "./trust-store.ts";
import type { PartialManifest, PodManifest } from "./types.ts";

/** Options for loadManifest. */
export interface LoadManifestOptions {
  /**
   * Directory the pod is started in. `.insomnia/` is looked for here and in each directory
   * above it up to the repository root (a directory holding `.git`) or below home; the
   * directory holding it is the workspace root and the default pwd (else `cwd` is).
   */
  cwd: string;
  /** XDG_CONFIG_HOME and HOME are read from here (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Replaces the workspace's `.insomnia/pod.yaml` (the CLI's --manifest); relative to cwd; must exist. */
  manifestFile?: string | undefined;
  /** Overlay expressions, applied in order above every file: `worker.instruction = "$user/foo"`. */
  overlays?: readonly string[] | undefined;
  /** Read the user layer (default true). */
  userLayer?: boolean | undefined;
  /**
   * Whether the workspace layer is trusted. Default: as `pod trust` recorded it (the real
   * workspace path with the SHA-256 of exactly this layer text); `true` trusts it without a record.
   */
  trustWorkspace?: boolean | undefined;
}

/** The workspace a manifest was loaded in. */
export interface LoadedWorkspace {
  /** The workspace root: the directory holding the `.insomnia/` found from `cwd`, or `cwd`. */
  root: string;
  /** True when a `.insomnia/` directory was found. */
  found: boolean;
  /** Absolute path of the workspace layer read (`.insomnia/pod.yaml`, or a `--manifest` inside the workspace). */
  layer?: string;
  /** Whether that layer is trusted (true when there is no workspace layer). */
  trusted: boolean;
}

/** The resolved manifest and the layer files actually read. */
export interface LoadedManifest {
  manifest: PodManifest;
  /** Absolute paths of the layer files read, lowest first. */
  files: string[];
  /** Every layer read (files and overlays), lowest first, with its kind and whether it is trusted. */
  layers: ManifestLayerInfo[];
  /**
   * Where each value set by a layer came from, by dotted key (`worker.instruction`,
   * `scope.allow[0].target`): the position of the value in the layer that won, with `file`
   * named as errors name it, the layer's kind and whether it is trusted. Keys left to their
   * defaults have no entry.
   */
  origins: ManifestOrigins;
  workspace: LoadedWorkspace;
}

/** Reads, validates and merges every layer (user, workspace, overlays) into a resolved manifest; throws ManifestError. */
export async function loadManifest(options: LoadManifestOptions): Promise<LoadedManifest> {
  const cwd = resolve(options.cwd);
  const env = options.env ?? process.env;
  const { root, found } = findWorkspace(cwd, env);
  const realRoot = realDirectory(root);
  const layers: PartialManifest[] = [];
  const infos: ManifestLayerInfo[] = [];
  const files: string[] = [];
  const origins: Record<string, ManifestOrigin> = {};
  const sections: Record<string, ManifestOrigin> = {};
  const rules = { allow: 0, deny: 0 };
  const add = (layer: PositionedLayer, info: ManifestLayerInfo) => {
    layers.push(layer.value);
    infos.push(Object.freeze(info));
    addLayerOrigins(origins, layer, info, rules);
    addSectionOrigins(sections, layer, info);
    if (info.path !== undefined) files.push(info.path);
  };

  const userPath = options.userLayer === false ? undefined : userManifestPath(env);
  if (userPath !== undefined) {
    const text = await readManifestFile(userPath, { optional: true });
    if (text !== undefined) {
      add(parsePositionedLayer(text, userPath), { layer: "user", file: userPath, path: userPath, trusted: true });
    }
  }

  const explicit = options.manifestFile !== undefined;
  const projectPath = explicit ? resolve(cwd, options.manifestFile!) : projectManifestPath(root);
  const display = explicit ? options.manifestFile! : displayPath(cwd, projectPath);
  const projectText = await readManifestFile(projectPath, { display, optional: !explicit });
  let workspace: LoadedWorkspace = { root, found, trusted: true };
  if (projectText !== undefined) {
    // A --manifest file inside the workspace is the checkout's as much as .insomnia/pod.yaml is.
    const inWorkspace = !explicit || isSameOrInside(realRoot, realDirectory(projectPath));
    const trusted = !inWorkspace || (options.trustWorkspace ?? (await isLayerTrusted(realRoot, projectText, env)));
    const layer = inWorkspace ? "workspace" : "manifest";
    add(parsePositionedLayer(projectText, display), { layer, file: display, path: projectPath, trusted });
    if (inWorkspace) workspace = { root, found, layer: projectPath, trusted };
  }

  const overlays = options.overlays ?? [];
  overlays.forEach((expression, index) => {
    const file = overlays.length === 1 ? "--overlay" : `<overlay ${index + 1}>`;
    add(parsePositionedOverlay(expression, file), { layer: "overlay", file, trusted: true });
  });

  const frozen = Object.freeze(origins);
  const manifest = resolveManifestWith(
    merge(...layers),
    { cwd: root, origins: { ...sections, ...frozen }, home: (options.env ?? process.env).HOME },
    (m) => attachProvenance(m, { root, found, layers: Object.freeze([...infos]), origins: frozen }),
  );
  return { manifest, files, layers: infos, origins: frozen, workspace };
}

/** The workspace layer as errors name it: `.insomnia/pod.yaml` in the cwd, else its path relative to the cwd. */
function displayPath(cwd: string, path: string): string {
  return relative(cwd, path);
}
