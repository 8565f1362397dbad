import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * This package's built `dist/index.js`, which the tests' child processes load (they have no
 * TypeScript loader): what the package ships, which the build makes before `pnpm test` runs the tests.
 */
export const BUILT_PACKAGE = fileURLToPath(new URL("../../dist/index.js", import.meta.url));

if (!existsSync(BUILT_PACKAGE)) {
  throw new Error(
    `${BUILT_PACKAGE} is missing: build the package first (pnpm turbo run build --filter=@insomnia/pod...)`,
  );
}
