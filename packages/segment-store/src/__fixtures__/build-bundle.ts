import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, "..", "..");

/**
 * Builds src/index.ts into a temp directory under node_modules (so @insomnia/errors still
 * resolves) and returns the file: URL of the bundle; the caller removes `dir`. Not dist, so a
 * concurrent `lint` of dist never sees it half-written.
 */
export async function buildBundle(): Promise<{ dir: string; url: string }> {
  const dir = await mkdtemp(join(packageDir, "node_modules", ".segment-store-test-dist-"));
  // tsup's own CLI file, run with this node: no dependence on pnpm being on PATH.
  const tsupManifest = createRequire(join(packageDir, "package.json")).resolve("tsup/package.json");
  const { bin } = JSON.parse(await readFile(tsupManifest, "utf8")) as { bin: Record<string, string> };
  await run(
    process.execPath,
    [
      join(dirname(tsupManifest), bin.tsup ?? ""),
      "src/index.ts",
      "--no-config",
      "--format",
      "esm",
      "--platform",
      "node",
      "--target",
      "node20",
      "--out-dir",
      dir,
    ],
    { cwd: packageDir },
  );
  return { dir, url: pathToFileURL(join(dir, "index.js")).href };
}
