#!/usr/bin/env node
// Checks each published package as the tarball it would publish: publint (strict) and Are the
// Types Wrong with the esm-only profile (the node10 and node16-from-CommonJS resolutions are not
// ours to serve). One `pnpm pack` for all packages and one process: the two CLIs per package
// packed every package twice and loaded TypeScript 17 times (bench/RESULTS.md, issue 28).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core";
import { problemKindInfo } from "@arethetypeswrong/core/problems";
import { publint } from "publint";
import { formatMessage } from "publint/utils";

const root = join(import.meta.dirname, "..");
const IGNORED_RESOLUTIONS = new Set(["node10", "node16-cjs"]);

/** Packs every package under packages/ with the workspace's pnpm; returns each one's name and tarball file. */
function packAll(destination) {
  // `pnpm run` names its own entry point; outside it, the pnpm on PATH.
  const execpath = process.env.npm_execpath;
  const pnpm = execpath?.includes("pnpm") ? [process.execPath, execpath] : ["pnpm"];
  const args = ["-r", "--filter", "./packages/*", "pack", "--pack-destination", destination, "--json"];
  const result = spawnSync(pnpm[0], [...pnpm.slice(1), ...args], { cwd: root, encoding: "utf8" });
  if (result.status !== 0) {
    const why = result.error?.message ?? `exit ${result.status}`;
    throw new Error(`pnpm pack failed (${why}); run this as \`pnpm check:packages\`\n${result.stdout}${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

/** publint's findings that fail the check (strict: warnings too), as printable lines. */
async function publintProblems(tarball) {
  const { messages, pkg } = await publint({ pack: { tarball: tarball.buffer }, strict: true });
  return messages
    .filter((message) => message.type !== "suggestion")
    .map((message) => `publint ${message.type}: ${formatMessage(message, pkg, { color: false })}`);
}

/** attw's problems in the resolutions an ESM-only package serves, as printable lines. */
async function attwProblems(tarball) {
  const analysis = await checkPackage(createPackageFromTarballData(tarball));
  if (!analysis.types) return ["attw: the package has no types"];
  return analysis.problems
    .filter((problem) => !("resolutionKind" in problem && IGNORED_RESOLUTIONS.has(problem.resolutionKind)))
    .map((problem) => {
      const where = [
        "entrypoint" in problem ? problem.entrypoint : undefined,
        "resolutionKind" in problem ? problem.resolutionKind : undefined,
      ].filter(Boolean);
      const info = problemKindInfo[problem.kind];
      return `attw ${problem.kind}${where.length > 0 ? ` (${where.join(", ")})` : ""}: ${info.description} ${info.docsUrl}`;
    });
}

const destination = mkdtempSync(join(tmpdir(), "check-packages-"));
try {
  const packed = packAll(destination);
  let failed = 0;
  for (const { name, filename } of packed) {
    const tarball = new Uint8Array(readFileSync(filename)); // its own ArrayBuffer, exactly the file
    const problems = [...(await publintProblems(tarball)), ...(await attwProblems(tarball))];
    for (const problem of problems) console.error(`${name}: ${problem}`);
    if (problems.length > 0) failed++;
  }
  if (failed > 0) {
    console.error(`check-packages: ${failed} of ${packed.length} packages have problems`);
    process.exitCode = 1;
  } else {
    console.log(`check-packages: ${packed.length} packages pass publint --strict and attw (esm-only)`);
  }
} finally {
  rmSync(destination, { recursive: true, force: true });
}
