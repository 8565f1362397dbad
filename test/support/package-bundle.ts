import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { buildPackageForTests } from "./build-package.ts";

/** The package under test built from its src/index.ts, for child processes and threads. */
export interface PackageBundle {
  /** The output directory (removed when the test run ends). */
  readonly dir: string;
  /** The file: URL of `<dir>/index.js`. */
  readonly url: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    packageBundle: PackageBundle;
  }
}

/**
 * A vitest global setup (`globalSetup: ["../../test/support/package-bundle.ts"]`): builds the
 * package once per test run, not once per test file that needs it, and removes it at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await buildPackageForTests(project.config.root, "src/index.ts", ".test-dist-");
  project.provide("packageBundle", { dir, url: pathToFileURL(join(dir, "index.js")).href });
  return () => rm(dir, { recursive: true, force: true });
}

/** The bundle the global setup built (see {@link setup}). */
export function packageBundle(): PackageBundle {
  return inject("packageBundle");
}
