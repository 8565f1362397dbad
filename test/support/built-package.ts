import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The built `dist/index.js` of the package at `packageDir`, for tests whose child processes or
 * threads load the package (they have no TypeScript loader): what the package ships, which the
 * build makes before `pnpm test` runs the tests.
 */
export function builtPackage(packageDir: string): string {
  const entry = join(packageDir, "dist", "index.js");
  if (!existsSync(entry)) {
    const { name } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { name: string };
    throw new Error(`${entry} is missing: build the package first (pnpm turbo run build --filter=${name}...)`);
  }
  return entry;
}
