#!/usr/bin/env node
// Records each package's public API from its built declarations (dist/index.d.ts) in
// packages/<name>/api/<name>.api.md, with API Extractor. `--check` (what `pnpm test` runs)
// fails when a report differs from the committed one: an API change must show up in review.
// `--update` rewrites the reports. Run after `pnpm build`.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompilerState, Extractor, ExtractorConfig } from "@microsoft/api-extractor";

const root = join(import.meta.dirname, "..");
const update = process.argv.includes("--update");
const only = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
const packagesDir = join(root, "packages");
const names = readdirSync(packagesDir).filter(
  (name) => existsSync(join(packagesDir, name, "package.json")) && (only.length === 0 || only.includes(name)),
);

/** One report per typed export of each public package: its config and where its report lives. */
const reports = [];
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
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: dir,
        mainEntryPointFilePath: entry,
        // Only built declarations: the shared program is made from the first package's config.
        compiler: {
          overrideTsconfig: {
            compilerOptions: { strict: true, skipLibCheck: true, types: ["node"] },
            include: ["dist/**/*.d.ts"],
          },
        },
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
          compilerMessageReporting: { default: { logLevel: "error" } },
          tsdocMessageReporting: { default: { logLevel: "none" } },
        },
      },
      configObjectFullPath: join(dir, "api-extractor.json"),
      packageJsonFullPath: join(dir, "package.json"),
    });
    reports.push({ name, subpath, reportName, temp, config });
  }
}

// One TypeScript program holds every entry point (the packages import each other's
// declarations): each report reads it instead of building its own.
const compilerState =
  reports.length === 0
    ? undefined
    : CompilerState.create(reports[0].config, {
        additionalEntryPoints: reports.map((r) => r.config.mainEntryPointFilePath),
      });

for (const { name, subpath, reportName, temp, config } of reports) {
  const dir = join(packagesDir, name);
  mkdirSync(temp, { recursive: true });
  mkdirSync(join(dir, "api"), { recursive: true });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: quiet,
    compilerState,
  });
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
if (failed > 0) process.exit(1);
console.log(`api-report: ${names.length} packages ${update ? "recorded" : "match their reports"}`);

function quiet(message) {
  // Only compiler errors matter here; TSDoc style and "missing release tag" notes are noise for this repo.
  if (message.category !== "Compiler" || message.logLevel !== "error") message.handled = true;
}
