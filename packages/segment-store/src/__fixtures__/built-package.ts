import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The file: URL of this package's built `dist/index.js`, for tests whose child processes or
 * threads load the package (they have no TypeScript loader): what the package ships, which the
 * build makes before `pnpm test` runs the tests.
 */
export const BUILT_PACKAGE_URL = new URL("../../dist/index.js", import.meta.url).href;

if (!existsSync(new URL(BUILT_PACKAGE_URL))) {
  throw new Error(
    `${fileURLToPath(BUILT_PACKAGE_URL)} is missing: build the package first (pnpm turbo run build --filter=@insomnia/segment-store...)`,
  );
}
