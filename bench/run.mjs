// Runs every benchmark (each in its own Node process, so heaps and JIT state do not
// leak between them), prints the tables and writes bench/RESULTS.md.
//
//   pnpm bench                      build, then all benchmarks, RESULTS.md rewritten
//   node bench/run.mjs render cli   only those (matched by file name); RESULTS.md untouched
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { linesOfCode, linesTable } from "./lines.mjs";
import { distFile, ROOT } from "./lib.mjs";

const BENCHES = [
  { file: "render.mjs", needs: ["template", "prompt-loader"] },
  { file: "parse-includes.mjs", needs: ["template", "prompt-loader"] },
  { file: "agents-md.mjs", needs: ["pod", "manifest", "prompt-loader"] },
  { file: "shared-template.mjs", needs: ["pod", "manifest", "worker", "template", "prompt-loader"] },
  { file: "cli-cold.mjs", needs: ["cli"], entry: "bin.cjs" },
  { file: "segment-log.mjs", needs: ["segment-store", "pod", "worker"] },
  { file: "pod-run.mjs", needs: ["ai-sdk", "pod", "worker", "manifest", "cli"] },
  { file: "segment-store-postgres.mjs", needs: ["segment-store-postgres"] },
  { file: "skills.mjs", needs: ["skills", "manifest", "cli"] },
  { file: "fs-tools.mjs", needs: ["fs-tools", "scope"] },
  { file: "linear-errors.mjs", needs: ["template", "manifest", "prompt-loader"] },
  { file: "sandbox.mjs", needs: ["sandbox", "scope"] },
  { file: "template-caps.mjs", needs: ["template", "prompt-loader"] },
  { file: "mcp.mjs", needs: ["mcp", "cli"] },
  { file: "live-turn.mjs", needs: ["ai-sdk", "worker", "cli"] },
  { file: "compaction-cache.mjs", needs: ["ai-sdk", "pod", "cli"] },
];

const KEPT_HEADING = "## Start-up and restore (issue 15)";
const filters = process.argv.slice(2);
const selected = filters.length === 0 ? BENCHES : BENCHES.filter((b) => filters.some((f) => b.file.includes(f)));
if (selected.length === 0) {
  console.error(`no benchmark matches ${filters.join(", ")}; there are: ${BENCHES.map((b) => b.file).join(", ")}`);
  process.exit(2);
}

const missing = [
  ...new Set(selected.flatMap((b) => b.needs.map((name) => distFile(name, name === "cli" ? "bin.cjs" : "index.js")))),
].filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.error(
    `Built packages are missing:\n${missing.map((f) => `  ${f}`).join("\n")}\nBuild them first: \`pnpm turbo run build\` (\`pnpm bench\` does it).`,
  );
  process.exit(1);
}

function machine() {
  const cpuinfo = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? "unknown";
  return {
    cpu: model.trim(),
    nproc: os.availableParallelism?.() ?? os.cpus().length,
    ram: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    load: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", "),
  };
}

const cell = (text) => String(text).replaceAll("|", "\\|").replaceAll("\n", " ");

function table(rows) {
  const head = ["figure", "ours", "reference", "ratio (ours / reference)", "goal", "met?"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const r of rows)
    lines.push(`| ${[r.figure, r.ours, r.reference, r.ratio, r.goal, r.met].map(cell).join(" | ")} |`);
  return lines.join("\n");
}

function section(bench, value, error) {
  if (error !== undefined) return `## ${bench.file}\n\n**Failed:** ${error}\n`;
  const notes = value.notes.map((n) => `- ${n}`).join("\n");
  return `## ${value.id}. ${value.title}\n\n${table(value.rows)}\n\n${notes}\n`;
}

const started = new Date();
const before = machine();
const tmp = await mkdtemp(join(os.tmpdir(), "insomnia-bench-run-"));
const sections = [];
const summary = [];
let failed = 0;
try {
  for (const bench of selected) {
    const out = join(tmp, `${bench.file}.json`);
    console.error(`▶ ${bench.file}`);
    const t0 = performance.now();
    const child = spawnSync(process.execPath, ["--expose-gc", join(ROOT, "bench", bench.file), "--out", out], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
    });
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    if (child.status !== 0 || !existsSync(out)) {
      failed++;
      const why = `\`node bench/${bench.file}\` exited with ${child.status ?? child.signal}; run it alone to see the error`;
      console.error(`✗ ${bench.file}: ${why}`);
      sections.push(section(bench, undefined, why));
      continue;
    }
    const value = JSON.parse(await readFile(out, "utf8"));
    console.error(`✓ ${bench.file} (${seconds} s)`);
    sections.push(section(bench, value));
    for (const row of value.rows) if (row.met === "yes" || row.met === "no") summary.push({ id: value.id, ...row });
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}

const after = machine();
const m = before;
const goals =
  summary.length === 0
    ? ""
    : [
        "## Goals at a glance",
        "",
        "| # | figure | ratio | goal | met? |",
        "|---|---|---|---|---|",
        ...summary.map((r) => `| ${r.id} | ${cell(r.figure)} | ${cell(r.ratio)} | ${cell(r.goal)} | ${r.met} |`),
        "",
      ].join("\n");
const markdown = [
  "# Benchmark results",
  "",
  "Written by `bench/run.mjs`; do not edit by hand. Every figure is measured in one process run side by side with its reference (the benchmark files say exactly what each side does), as the median of many samples (tinybench 6, or alternating `spawnSync` runs for the process benchmark).",
  "",
  `- Reproduce: \`pnpm bench\` (= \`turbo run build && node bench/run.mjs\`); one benchmark: \`node bench/run.mjs render\``,
  `- Date: ${started.toISOString()} (took ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s)`,
  `- Machine: ${m.cpu}, nproc ${m.nproc}, ${m.ram} RAM, ${m.os}`,
  `- Node: ${m.node}`,
  `- Load average (1, 5, 15 min) at start: ${before.load}; at end: ${after.load}. Ratios are steadier than absolute times, but a loaded machine widens them, most of all for the process benchmark.`,
  "",
  goals,
  "## Lines of code per package",
  "",
  "Non-blank lines of `packages/<name>/src/**/*.ts` (`node bench/lines.mjs`), so a change that grows a package is seen.",
  "",
  linesTable(linesOfCode()),
  "",
  ...sections,
].join("\n");

process.stdout.write(`${markdown}\n`);
if (filters.length === 0) {
  // Hand-written sections at the end (from "## Start-up and restore (issue 15)" on: before/after
  // ratios of the changes, from runs of other builds) are kept as they are.
  const file = join(ROOT, "bench", "RESULTS.md");
  const previous = existsSync(file) ? readFileSync(file, "utf8") : "";
  const kept = previous.indexOf(KEPT_HEADING);
  await writeFile(file, kept === -1 ? markdown : `${markdown}\n${previous.slice(kept)}`);
  console.error(`wrote bench/RESULTS.md`);
} else {
  console.error("a subset was run: bench/RESULTS.md left unchanged");
}
process.exitCode = failed === 0 ? 0 : 1;
