import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildPackageForTests } from "../../../../test/support/build-package.ts";

const packageDir = join(import.meta.dirname, "..", "..");

/**
 * Builds src/index.ts (see buildPackageForTests: @insomnia/errors still resolves) and returns
 * the file: URL of the bundle; the caller removes `dir`.
 */
export async function buildBundle(): Promise<{ dir: string; url: string }> {
  const dir = await buildPackageForTests(packageDir, "src/index.ts", ".segment-store-test-dist-");
  return { dir, url: pathToFileURL(join(dir, "index.js")).href };
}
