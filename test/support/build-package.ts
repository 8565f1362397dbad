import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

/**
 * Builds `entry` of the package at `packageDir` (ESM, Node 20, no tsup config) for tests that
 * run it in child processes, and returns the output directory. It goes to a new temp directory
 * under the package's node_modules, so the package's dependencies still resolve from the built
 * files, and never to dist, which `check:packages` may be packing at the same time. The caller removes it.
 * tsup's own CLI file is run with this node: no dependence on pnpm being on PATH.
 */
export async function buildPackageForTests(packageDir: string, entry: string, prefix: string): Promise<string> {
  const out = await mkdtemp(join(packageDir, "node_modules", prefix));
  const tsupManifest = createRequire(join(packageDir, "package.json")).resolve("tsup/package.json");
  const { bin } = JSON.parse(await readFile(tsupManifest, "utf8")) as { bin: Record<string, string> };
  const tsup = bin.tsup;
  if (tsup === undefined) throw new Error(`${tsupManifest} names no tsup bin`);
  await promisify(execFile)(
    process.execPath,
    [
      join(dirname(tsupManifest), tsup),
      entry,
      "--no-config",
      "--format",
      "esm",
      "--platform",
      "node",
      "--target",
      "node20",
      "--out-dir",
      out,
    ],
    { cwd: packageDir },
  );
  return out;
}
