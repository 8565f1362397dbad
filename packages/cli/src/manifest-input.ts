import { resolve } from "node:path";
import type { LoadManifestOptions } from "@insomnia/manifest";
import type { ManifestOptions } from "./args.ts";
import type { CliIo } from "./io.ts";

/** loadManifest options for a command's --manifest/--overlay flags in the directory `cwd`. */
export function manifestLoadOptions(options: ManifestOptions, cwd: string, io: CliIo): LoadManifestOptions {
  return {
    cwd,
    env: { ...io.env },
    overlays: options.overlays,
    // --manifest is a path the user typed, so it is relative to where they typed it.
    ...(options.manifest === undefined ? {} : { manifestFile: resolve(io.cwd, options.manifest) }),
  };
}
