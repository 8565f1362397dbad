import { createHash } from "node:crypto";
import { isAbsolute, join, resolve } from "node:path";
import type { PodManifest } from "@insomnia/manifest";
import type { SegmentStore } from "@insomnia/pod";
import { CliError } from "./cli-error.ts";
import { redacted } from "./shown-text.ts";
import type { CliIo } from "./io.ts";
import { storeSpecKind } from "./store-spec.ts";

/** Where a pod's log lives, as `pod run`, `resume` and `log` report it. */
export interface PodStore {
  store: SegmentStore;
  /** A directory, or a connection string with its user-info and password parameters redacted. */
  location: string;
  /** Releases what the store holds open (a database pool); absent for a file store. */
  close?: () => Promise<void>;
}

/**
 * The directory of one pod inside a store root: its name (made safe for a file name) and a
 * hash of its pwd, so two checkouts of one repository never share a conversation.
 */
export function podDirectoryName(manifest: PodManifest): string {
  const name =
    manifest.pod.name
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^[-.]+|-+$/g, "")
      .slice(0, 64) || "pod";
  const hash = sha256Hex(manifest.pod.pwd).slice(0, 12);
  return `${name}-${hash}`;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * OpenAI's `prompt_cache_key` for one segment of one pod: segment ids repeat across pods
 * (each store numbers its own), so the pod's directory name is hashed in. At most 40 characters.
 */
export function promptCacheKey(manifest: PodManifest, segmentId: string): string {
  const pod = sha256Hex(podDirectoryName(manifest)).slice(0, 16);
  return `insomnia-${pod}-${segmentId.slice(0, 14)}`;
}

/** `$XDG_STATE_HOME/insomnia/pods` (`~/.local/state/insomnia/pods` when unset or relative). */
export function defaultStoreRoot(env: CliIo["env"]): string {
  const state = env.XDG_STATE_HOME;
  if (state !== undefined && state !== "" && isAbsolute(state)) return join(state, "insomnia", "pods");
  const home = env.HOME;
  if (home === undefined || home === "") {
    throw new CliError("USAGE", "no store directory: set HOME or XDG_STATE_HOME, or pass --store DIR");
  }
  return join(home, ".local", "state", "insomnia", "pods");
}

/** How `pod` opens a store: `reader` (`pod log`) never creates a database schema. */
export interface OpenPodStoreOptions {
  reader?: boolean;
}

/**
 * Opens the pod's log: `--store`, else `INSOMNIA_STORE`, else the default root. A directory
 * (flag or variable) is a root holding one directory per pod, like the default.
 */
export async function openPodStore(
  flag: string | undefined,
  manifest: PodManifest,
  io: CliIo,
  options: OpenPodStoreOptions = {},
): Promise<PodStore> {
  const fromEnv = io.env.INSOMNIA_STORE;
  const spec = flag ?? (fromEnv === undefined || fromEnv === "" ? undefined : fromEnv);
  const kind =
    spec === undefined ? "directory" : storeSpecKind(spec, flag === undefined ? "INSOMNIA_STORE" : "--store");
  if (kind === "postgres") return openPostgresStore(spec!, manifest, options);
  const root = spec === undefined ? defaultStoreRoot(io.env) : resolve(io.cwd, spec);
  const location = join(root, podDirectoryName(manifest));
  const { FileSegmentStore } = await import("@insomnia/pod");
  return { store: new FileSegmentStore(location), location };
}

/**
 * The PostgreSQL store (`@insomnia/segment-store-postgres`, loaded only for a postgres:// store),
 * keyed by the same pod id as a file store's directory. Its pool is closed by `close()`.
 */
async function openPostgresStore(spec: string, manifest: PodManifest, options: OpenPodStoreOptions): Promise<PodStore> {
  const [{ openPostgresStore: open }, { SegmentStoreError }] = await Promise.all([
    import("@insomnia/segment-store-postgres"),
    import("@insomnia/pod"),
  ]);
  const location = redacted(spec);
  try {
    const store = await open(spec, podDirectoryName(manifest), options.reader === true ? { createSchema: false } : {});
    return { store, location, close: () => store.close() };
  } catch (error) {
    // A reader found no tables: the database holds no conversation (and stays as it was).
    if (SegmentStoreError.is(error) && error.code === "SEGMENT_NOT_FOUND") {
      throw new CliError("NO_CONVERSATION", `no conversation in ${location}; start one with pod run <message>`, {
        file: location,
        cause: error,
      });
    }
    throw error;
  }
}
