// Shared helpers of the benchmarks: loading our built packages, timing with tinybench,
// and the result format every bench file hands back to run.mjs.
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Bench } from "tinybench";

/** Absolute path of the repository root. */
export const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Built entry point of a workspace package (`packages/<name>/dist/<entry>`). */
export function distFile(name, entry = "index.js") {
  return join(ROOT, "packages", name, "dist", entry);
}

/** Imports a workspace package from its built dist, failing with a message that says what to run. */
export async function importDist(name, entry = "index.js") {
  const file = distFile(name, entry);
  if (!existsSync(file)) {
    throw new Error(`${file} is missing: build the packages first (\`pnpm turbo run build\`, or run \`pnpm bench\`)`);
  }
  return import(pathToFileURL(file).href);
}

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Calls `fn` once; true when it returned a promise (which is awaited), so calls are never left overlapping. */
async function returnsPromise(fn) {
  const value = fn();
  if (typeof value?.then !== "function") return false;
  await value;
  return true;
}

/**
 * Times several functions side by side in this process with tinybench and returns, per
 * name, the median time of one call in milliseconds. Each sample calls `fn` `batch`
 * times (amortizing the timer for microsecond work); the tasks run in `rounds` rounds,
 * in a rotated order each round, and the median is taken over the samples of all rounds,
 * so a slow drift of the machine hits every task alike.
 */
export async function compare(
  tasks,
  { time = 500, rounds = 3, batch = 1, iterations = 10, warmupTime = 200, warmupIterations = 2 } = {},
) {
  const names = Object.keys(tasks);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  const isAsync = {};
  for (let round = 0; round < rounds; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]);
    const bench = new Bench({ time, iterations, warmupTime, warmupIterations, retainSamples: true, throws: true });
    for (const name of order) {
      const fn = tasks[name];
      isAsync[name] ??= await returnsPromise(fn);
      bench.add(
        name,
        isAsync[name]
          ? async () => {
              for (let i = 0; i < batch; i++) await fn();
            }
          : () => {
              for (let i = 0; i < batch; i++) fn();
            },
      );
    }
    await bench.run();
    for (const task of bench.tasks) {
      const latency = task.result.latency;
      samples[task.name].push(...(latency.samples ?? [latency.p50]));
    }
  }
  return Object.fromEntries(
    names.map((name) => [name, { ms: median(samples[name]) / batch, samples: samples[name].length }]),
  );
}

/** A temp directory removed by the returned `cleanup`. */
export async function tempDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), `insomnia-bench-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Formats a duration given in milliseconds. */
export function fmtMs(ms) {
  if (ms < 0) return `−${fmtMs(-ms)}`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  if (ms >= 0.001) return `${(ms * 1000).toFixed(2)} µs`;
  return `${(ms * 1e6).toFixed(0)} ns`;
}

/** Formats a byte count. */
export function fmtBytes(bytes) {
  if (Math.abs(bytes) >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  if (Math.abs(bytes) >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${Math.round(bytes)} B`;
}

/** Formats a ratio. */
export function fmtRatio(ratio) {
  return `${ratio.toFixed(2)}x`;
}

/**
 * A benchmark's result as run.mjs renders it: `rows` are
 * `{ figure, ours, reference, ratio, goal, met }` (strings; `met` is "yes", "no" or "—").
 */
export function result(id, title, { rows, notes = [], extra = [] }) {
  return { id, title, rows, notes, extra };
}

/** "yes"/"no" for a goal, "—" when there is none. */
export function met(ok) {
  return ok === undefined ? "—" : ok ? "yes" : "no";
}

/** The entry point of a bench file run by run.mjs: prints progress to stderr, the result as JSON to `--out`. */
export async function main(run) {
  const at = process.argv.indexOf("--out");
  const out = at === -1 ? undefined : process.argv[at + 1];
  const value = await run((message) => process.stderr.write(`  ${message}\n`));
  if (out !== undefined) await writeFile(out, JSON.stringify(value));
  else process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The environment of a `pod` process in a bench: home, config and state in `dir`, a key the local server accepts. */
export function podBenchEnv(dir) {
  return {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_STATE_HOME: join(dir, "state"),
    ANTHROPIC_API_KEY: "bench",
    NO_COLOR: "1",
  };
}
