import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { BIN } from "./src/__fixtures__/sandbox.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** XDG_CACHE_HOME shared by the run's `pod` processes: the bin's compile cache is warm after the first. */
    podCacheHome: string;
  }
}

/** The process tests run the built bin (turbo builds it before this package's tests); say so when it is missing. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build the package first (pnpm turbo run build --filter=@insomnia/cli...)`);
  const cacheHome = await mkdtemp(join(tmpdir(), "pod-cli-cache-"));
  project.provide("podCacheHome", cacheHome);
  return () => rm(cacheHome, { recursive: true, force: true });
}
