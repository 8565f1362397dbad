#!/usr/bin/env node
// The `pod` bin (dist/bin.cjs): runs the bundled CLI (dist/pod.cjs) through the compile cache.
import { BundleLoader, CompileCache, compileCacheDir } from "./compile-cache.ts";

/** Each bundle file's content id (JSON), written in by the build (packages/cli/tsup.config.ts). */
const BUNDLE_IDS = bundleIds("__POD_BUNDLE_IDS__");

function bundleIds(json: string): Record<string, string> | undefined {
  try {
    return JSON.parse(json) as Record<string, string>;
  } catch {
    return undefined; // not a build: no cache
  }
}

const dir = compileCacheDir(process.env);
const cache = dir === undefined || BUNDLE_IDS === undefined ? undefined : new CompileCache(dir, BUNDLE_IDS);
if (cache !== undefined) process.once("exit", () => cache.flush());
new BundleLoader(__dirname, cache).load("pod.cjs");
