import { type PackageBundle, packageBundle } from "../../../../test/support/package-bundle.ts";

/**
 * This package built from src (see buildPackageForTests: @insomnia/errors still resolves), once
 * per test run by the global setup in vitest.config.ts, for tests whose child processes load it.
 */
export function testBundle(): PackageBundle {
  return packageBundle();
}
