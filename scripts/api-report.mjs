#!/usr/bin/env node
// Records each package's public API from its built declarations (dist/index.d.ts) in
// packages/<name>/api/<name>.api.md, with API Extractor. `--check` (what `pnpm test` runs)
// fails when a report differs from the committed one: an API change must show up in review.
// `--update` rewrites the reports. Run after `pnpm build`.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const root = join(import.meta.dirname, "..");
const update = process.argv.includes("--update");
const only = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
const packagesDir = join(root, "packages");
const names = readdirSync(packagesDir).filter(
  (name) => existsSync(join(packagesDir, name, "package.json")) && (only.length === 0 || only.includes(name)),
);

// Each package's report builds its own TypeScript program, one core each: the packages are split
// between processes (each given its names), one per core.
const processes = Math.min(availableParallelism(), names.length);
if (only.length === 0 && processes > 1) {
  const script = fileURLToPath(import.meta.url);
  const codes = await Promise.all(
    Array.from({ length: processes }, (_, i) => {
      const share = names.filter((_, index) => index % processes === i);
      const child = spawn(process.execPath, [script, ...process.argv.slice(2), ...share], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      return new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    }),
  );
  if (codes.some((code) => code !== 0)) process.exit(1);
  console.log(`api-report: ${names.length} packages ${update ? "recorded" : "match their reports"}`);
  process.exit(0);
}

let failed = 0;
for (const name of names) {
  const dir = join(packagesDir, name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (pkg.private) continue;
  const entries = Object.entries(pkg.exports ?? {}).filter(([, target]) => typeof target === "object" && target.types);
  for (const [subpath, target] of entries) {
    const suffix = subpath === "." ? "" : `-${subpath.replace(/^\.\//, "").replaceAll("/", "-")}`;
    const reportName = `${name}${suffix}.api.md`;
    const entry = join(dir, target.types);
    if (!existsSync(entry)) {
      console.error(`api-report: ${name}: ${target.types} is missing; run pnpm build first`);
      failed++;
      continue;
    }
    const temp = join(tmpdir(), `api-report-${process.pid}-${name}${suffix}`);
    mkdirSync(temp, { recursive: true });
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: dir,
        mainEntryPointFilePath: entry,
        compiler: { overrideTsconfig: { compilerOptions: { strict: true, skipLibCheck: true, types: ["node"] } } },
        apiReport: {
          enabled: true,
          reportFolder: join(dir, "api"),
          reportTempFolder: temp,
          reportFileName: reportName,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        newlineKind: "lf",
        messages: {
          extractorMessageReporting: {
            default: { logLevel: "none" },
          },
          compilerMessageReporting: { default: { logLevel: "warning" } },
          tsdocMessageReporting: { default: { logLevel: "none" } },
        },
      },
      configObjectFullPath: join(dir, "api-extractor.json"),
      packageJsonFullPath: join(dir, "package.json"),
    });
    mkdirSync(join(dir, "api"), { recursive: true });
    const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false, messageCallback: quiet });
    rmSync(temp, { recursive: true, force: true });
    if (result.apiReportChanged && !update) {
      console.error(
        `api-report: the public API of @insomnia/${name}${subpath === "." ? "" : subpath.slice(1)} changed; ` +
          `review it and run \`pnpm api:update\` to record packages/${name}/api/${reportName}`,
      );
      failed++;
    } else if (!result.succeeded && !result.apiReportChanged) {
      console.error(`api-report: ${name}: API Extractor failed (${result.errorCount} errors)`);
      failed++;
    }
  }
}
if (failed > 0) process.exit(1);
console.log(`api-report: ${names.length} packages ${update ? "recorded" : "match their reports"}`);

function quiet(message) {
  // Only compiler errors matter here; TSDoc style and "missing release tag" notes are noise for this repo.
  if (message.category !== "Compiler" || message.logLevel !== "error") message.handled = true;
}
