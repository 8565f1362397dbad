import { readFileSync } from "node:fs";

/**
 * The version of @insomnia/cli, read from its package.json beside `dist/` (or `src/`) when
 * asked: the build does not depend on the version, so `pnpm release` publishes the build that
 * the tests ran, versioned after it.
 */
export function podVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version?: unknown;
  };
  if (typeof manifest.version !== "string") throw new Error("@insomnia/cli's package.json has no version");
  return manifest.version;
}
