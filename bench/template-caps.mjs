// Benchmark 8: the template's caps and cache memory (issue 27). A fan-out include tree of
// 160 files of 180 KB is refused with EXPANSION_TOO_LARGE at the include where the count
// crosses, in the time and memory of a 10-file tree of the same files; the template cache
// holds a bounded, measured amount of heap per cached file.
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { distFile, fmtBytes, fmtMs, fmtRatio, importDist, main, median, met, result, ROOT, tempDir } from "./lib.mjs";

const { SystemPromptTemplate, clearTemplateCache, templateCacheStats } = await importDist("template");

/** 180,000 bytes, 10,000 statements: a file exactly at the per-file statement cap. */
const INCLUDE = "{{#if cwd}}{{/if}}".repeat(10_000);
const ROUNDS = 3;

/** Runs one parse in a fresh process: time to the error and the process's peak RSS. */
function parseInChild(workspaceDir) {
  const script = `
    const t0 = performance.now();
    const { SystemPromptTemplate } = await import(${JSON.stringify(distFile("template"))});
    const { PromptLoader } = await import(${JSON.stringify(distFile("prompt-loader"))});
    let outcome = "rendered";
    try {
      await SystemPromptTemplate.parse("$workspace/main", new PromptLoader({ workspaceDir: ${JSON.stringify(workspaceDir)} }));
    } catch (error) {
      outcome = error.code + " at " + error.ref + ":" + error.line + ":" + error.column;
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage();
    process.stdout.write(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, rssKiB: process.resourceUsage().maxRSS, outcome }));
  `;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`the parse process failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

async function writeFanOut(dir, count) {
  const lines = Array.from({ length: count }, (_, i) => `{{> f${i + 1}}}`);
  await writeFile(join(dir, "main.md"), `${lines.join("\n")}\n`);
  for (let i = 1; i <= count; i++) await writeFile(join(dir, `f${i}.md`), INCLUDE);
}

async function fanOut(dir, log) {
  const trees = { big: join(dir, "fan-160"), small: join(dir, "fan-10") };
  const { mkdir } = await import("node:fs/promises");
  await mkdir(trees.big);
  await mkdir(trees.small);
  await writeFanOut(trees.big, 160);
  await writeFanOut(trees.small, 10);
  const samples = { big: [], small: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, so a drift of the machine's load hits both alike.
    for (const name of round % 2 === 0 ? ["big", "small"] : ["small", "big"]) {
      samples[name].push(parseInChild(trees[name]));
    }
  }
  const outcomes = new Set([...samples.big, ...samples.small].map((s) => s.outcome));
  const m = (name, key) => median(samples[name].map((s) => s[key]));
  const figures = {
    bigMs: m("big", "ms"),
    smallMs: m("small", "ms"),
    bigCpu: m("big", "cpuMs"),
    smallCpu: m("small", "cpuMs"),
    bigRss: m("big", "rssKiB") * 1024,
    smallRss: m("small", "rssKiB") * 1024,
    outcomes: [...outcomes],
  };
  log(
    `fan-out: 160 files ${fmtMs(figures.bigMs)}, 10 files ${fmtMs(figures.smallMs)}; ${figures.outcomes.join(" / ")}`,
  );
  return figures;
}

/** Heap held per cached file after parsing `count` distinct files, measured after a full GC. */
async function cacheHeap(texts) {
  const loader = {
    async load(ref) {
      const i = Number(ref.canonical.slice("$workspace/f".length));
      return { ref, text: texts[i], file: `/bench/f${i}.md`, sha256: "" };
    },
  };
  clearTemplateCache();
  global.gc();
  global.gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < texts.length; i++) await SystemPromptTemplate.parse(`$workspace/f${i}`, loader);
  global.gc();
  global.gc();
  const held = process.memoryUsage().heapUsed - before;
  const stats = templateCacheStats();
  clearTemplateCache();
  const bytes = Buffer.byteLength(texts[0]);
  return {
    held,
    cached: stats.size,
    perFile: held / stats.size,
    bytes,
    estimated: stats.bytes,
    maxBytes: stats.maxBytes,
  };
}

export default async function run(log) {
  if (typeof global.gc !== "function") throw new Error("run with --expose-gc (bench/run.mjs does)");
  const { dir, cleanup } = await tempDir("template-caps");
  try {
    const builtin = await readFile(join(ROOT, "resources", "prompts", "default.md"), "utf8");
    const realistic = Array.from({ length: 4000 }, (_, i) => `# Instruction ${i}\n${builtin}`);
    const dense = Array.from({ length: 4000 }, (_, i) => `${i}\n${"{{cwd}}".repeat(290)}`);
    log("template cache: 4,000 distinct instruction files…");
    const real = await cacheHeap(realistic);
    log(`  ${real.cached} cached, ${fmtBytes(real.perFile)} per cached file (${fmtBytes(real.bytes)} of text)`);
    log("template cache: 4,000 distinct files of 290 {{cwd}}…");
    const worst = await cacheHeap(dense);
    log(`  ${worst.cached} cached, ${fmtBytes(worst.perFile)} per cached file, ${fmtBytes(worst.held)} held`);
    const fan = await fanOut(dir, log);

    const rows = [
      {
        figure: "fan-out tree, 160 × 180 KB includes: time to EXPANSION_TOO_LARGE",
        ours: `${fmtMs(fan.bigMs)} (CPU ${fmtMs(fan.bigCpu)})`,
        reference: `10-file tree: ${fmtMs(fan.smallMs)} (CPU ${fmtMs(fan.smallCpu)})`,
        ratio: fmtRatio(fan.bigMs / fan.smallMs),
        goal: "≤ 2x",
        met: met(fan.bigMs / fan.smallMs <= 2),
      },
      {
        figure: "fan-out tree, 160 × 180 KB includes: peak RSS to the error",
        ours: fmtBytes(fan.bigRss),
        reference: `10-file tree: ${fmtBytes(fan.smallRss)}`,
        ratio: fmtRatio(fan.bigRss / fan.smallRss),
        goal: "≤ 2x",
        met: met(fan.bigRss / fan.smallRss <= 2),
      },
      {
        figure: `template cache: heap held per cached file, 4,000 distinct instruction files (${real.cached} cached)`,
        ours: fmtBytes(real.perFile),
        reference: `file: ${fmtBytes(real.bytes)}`,
        ratio: fmtRatio(real.perFile / real.bytes),
        goal: "≤ 4x",
        met: met(real.perFile / real.bytes <= 4),
      },
      {
        figure: `template cache: heap held, 4,000 distinct files of 290 \`{{cwd}}\` (${worst.cached} cached)`,
        ours: `${fmtBytes(worst.held)} (${fmtBytes(worst.perFile)} per cached file)`,
        reference: `cache bound: ${fmtBytes(worst.maxBytes)}`,
        ratio: fmtRatio(worst.held / worst.maxBytes),
        goal: "≤ 1x (tens of MiB)",
        met: met(worst.held <= worst.maxBytes),
      },
    ];
    return result(8, "Template caps and cache memory", {
      rows,
      notes: [
        `Fan-out: \`main.md\` includes \`f1\` … \`fN\`, each 180,000 bytes of \`{{#if cwd}}{{/if}}\` (10,000 statements, at the per-file cap); the expansion count crosses 100,000 at the tenth include in both trees (${fan.outcomes.join("; ")}). Each parse runs in a fresh process (\`SystemPromptTemplate.parse\` with the real PromptLoader, imports included), ${ROUNDS} alternating rounds, medians; peak RSS is the process's \`resourceUsage().maxRSS\`. Before issue 27 every include was loaded first: \`pod check\` took 92.7 s and 3.5 GB on the 160-file tree.`,
        `Cache: \`templateCacheStats()\` counts estimated bytes (text, 900 bytes per statement, 1 KiB per file) against \`maxBytes\`; the heap is measured with \`process.memoryUsage().heapUsed\` after two \`gc()\` before and after parsing the 4,000 files, divided by the files still cached. Realistic file: the builtin default instruction with a distinct first line (${fmtBytes(real.bytes)}); its estimate is ${fmtBytes(real.estimated / real.cached)} per file. Dense file: every character a statement, the worst case per byte (before issue 27 such files held about 290 KB each, ~1 GB for 4,000).`,
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);
