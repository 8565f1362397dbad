#!/usr/bin/env node
// The `pod` bin (dist/bin.cjs): runs the bundled CLI (dist/pod.cjs) through the compile cache.
import { BundleLoader, CompileCache, compileCacheDir } from "./compile-cache.ts";
import type { BundleFile } from "./compile-cache.ts";
import { COMMAND_NAMES } from "./command-names.ts";

/** The bundle files (JSON), written in by the build (packages/cli/tsup.config.ts). */
const BUNDLE_FILES = bundleFiles("__POD_BUNDLE_FILES__");

function bundleFiles(json: string): Record<string, BundleFile> {
  try {
    return JSON.parse(json) as Record<string, BundleFile>;
  } catch {
    return {}; // not a build: no cache
  }
}

/** The command this run is (`pod <command> …`), or "other" (help, version, a usage error). */
function commandOf(argv: readonly string[]): string {
  const word = argv[2];
  return word !== undefined && (COMMAND_NAMES as readonly string[]).includes(word) ? word : "other";
}

const dir = compileCacheDir(process.env);
const cache = dir === undefined ? undefined : new CompileCache(dir, { "pod.cjs": commandOf(process.argv) });
if (cache !== undefined) process.once("exit", () => cache.flush());
new BundleLoader(__dirname, BUNDLE_FILES, cache).load("pod.cjs");
