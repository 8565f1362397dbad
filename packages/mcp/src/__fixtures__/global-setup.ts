import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import type { TestProject } from "vitest/node";
import { FIXTURES } from "./servers.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The stdio fixture server bundled with the SDK it imports (see {@link setup}). */
    mcpStdioFixture: string;
  }
}

/**
 * A vitest global setup: bundles FIXTURES.stdio with the MCP SDK into one file for this run, so
 * each of the many servers the tests start loads one module, not the SDK's module graph, and
 * removes it at the end. The server's code and the SDK's are the same as when run unbundled.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), "insomnia-mcp-fixture-"));
  await build({
    configFile: false,
    logLevel: "silent",
    root: project.config.root,
    publicDir: false,
    build: {
      ssr: FIXTURES.stdio,
      outDir: dir,
      emptyOutDir: true,
      write: true,
      minify: false,
      target: "node20",
      copyPublicDir: false,
      reportCompressedSize: false,
      rollupOptions: { output: { format: "es", entryFileNames: "stdio-server.mjs" } },
    },
    ssr: { noExternal: true, target: "node" },
  });
  project.provide("mcpStdioFixture", join(dir, "stdio-server.mjs"));
  return () => rm(dir, { recursive: true, force: true });
}
