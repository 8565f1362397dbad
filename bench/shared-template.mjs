// Benchmark 4: one compiled template shared by 10,000 pods materializing — time and heap
// per pod, against rendering the same prompt 10,000 times with raw Handlebars.
// Needs --expose-gc (run.mjs passes it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { floorRenderer, trailing } from "./render.mjs";
import { fmtBytes, fmtMs, fmtRatio, importDist, main, median, met, result, tempDir } from "./lib.mjs";

const { loadManifest } = await importDist("manifest");
const { Pod, MemorySegmentStore, parsePodPrompt, renderPodPrompt } = await importDist("pod");
const { Worker } = await importDist("worker");
const { templateCacheStats, clearTemplateCache } = await importDist("template");
const { BUILTIN_PROMPTS_DIR } = await importDist("prompt-loader");

const PODS = 10_000;
const NOW = new Date(Date.UTC(2026, 10, 30, 16, 37, 0));
const TOOLS = ["read_file", "write_file", "run_command"];
const client = { complete: async () => ({ content: "" }) };

function heap() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/** Runs `make(i)` PODS times, keeping every result alive; time and heap per item. */
async function measure(make) {
  const kept = new Array(PODS);
  const before = heap();
  const t0 = performance.now();
  for (let i = 0; i < PODS; i++) kept[i] = await make(i);
  const ms = performance.now() - t0;
  const after = heap();
  const perItem = { ms: ms / PODS, bytes: (after - before) / PODS };
  kept.length = 0;
  return perItem;
}

async function rounds(count, make) {
  const all = [];
  for (let r = 0; r < count; r++) all.push(await measure(make));
  return { ms: median(all.map((m) => m.ms)), bytes: median(all.map((m) => m.bytes)) };
}

export default async function run(log) {
  if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc (pnpm bench does)");
  const { dir: cwd, cleanup } = await tempDir("pods");
  const env = { HOME: cwd, XDG_CONFIG_HOME: join(cwd, "config") };
  try {
    const { manifest } = await loadManifest({ cwd, env, userLayer: false });
    const prepared = await parsePodPrompt(manifest, { env });
    const scope = prepared.scope.toData();
    const floor = floorRenderer(readFileSync(join(BUILTIN_PROMPTS_DIR, "default.md"), "utf8"));
    const data = {
      date: "2026-11-30",
      time: "16:37:00",
      datetime: "2026-11-30T16:37:00Z",
      cwd,
      scope,
      tools: [...TOOLS].sort(),
    };
    const expected = (await renderPodPrompt(prepared, { tools: TOOLS, now: NOW })).prompt;
    if (trailing(floor(data), scope.summary) !== expected) throw new Error("raw Handlebars and renderPodPrompt differ");

    // The floor: the same prompt rendered and kept 10,000 times (flattened, as a real
    // consumer that writes it somewhere gets it).
    log("reference: raw Handlebars render + trailing concat, 10,000 times…");
    const floorRun = () =>
      rounds(3, () => {
        const s = trailing(floor(data), scope.summary);
        s.charCodeAt(0);
        return s;
      });
    log("renderPodPrompt(prepared) 10,000 times (one parsed template)…");
    const sharedRun = () => rounds(3, async () => (await renderPodPrompt(prepared, { tools: TOOLS, now: NOW })).prompt);
    log("Pod.fromManifest + materialize, 10,000 pods kept alive…");
    const podRun = async () => {
      clearTemplateCache();
      const store = new MemorySegmentStore();
      const result = await rounds(1, async () => {
        const pod = await Pod.fromManifest(manifest, {
          worker: new Worker({ client }),
          store,
          env,
          clock: { now: () => NOW },
        });
        await pod.materialize();
        return pod;
      });
      return { ...result, cache: templateCacheStats() };
    };
    // Warm-up of every path, then the measured runs.
    await measure(async () => trailing(floor(data), scope.summary));
    const floorResult = await floorRun();
    const shared = await sharedRun();
    const pods = await podRun();

    return result(4, "One compiled template shared by 10,000 pods", {
      rows: [
        {
          figure: "10,000 pods: `Pod.fromManifest` + `materialize()`, time per pod",
          ours: fmtMs(pods.ms),
          reference: `raw Handlebars render + concat: ${fmtMs(floorResult.ms)}`,
          ratio: fmtRatio(pods.ms / floorResult.ms),
          goal: "—",
          met: "—",
        },
        {
          figure: "10,000 pods: heap per pod (pods, workers, segment start records kept)",
          ours: fmtBytes(pods.bytes),
          reference: `one rendered prompt string kept: ${fmtBytes(floorResult.bytes)}`,
          ratio: fmtRatio(pods.bytes / floorResult.bytes),
          goal: "no template per pod",
          met: met(pods.cache.misses === 1),
        },
        {
          figure: "`renderPodPrompt(prepared)` × 10,000 (the shared-template render path), time each",
          ours: fmtMs(shared.ms),
          reference: `raw Handlebars render + concat: ${fmtMs(floorResult.ms)}`,
          ratio: fmtRatio(shared.ms / floorResult.ms),
          goal: "—",
          met: "—",
        },
        {
          figure: "`renderPodPrompt(prepared)` × 10,000, heap per prompt kept",
          ours: fmtBytes(shared.bytes),
          reference: `one rendered prompt string kept: ${fmtBytes(floorResult.bytes)}`,
          ratio: fmtRatio(shared.bytes / floorResult.bytes),
          goal: "≈ one string",
          met: met(shared.bytes / floorResult.bytes <= 1.2),
        },
      ],
      notes: [
        `Prompt: the default instruction for an empty workspace (no AGENTS.md), 3 tools, ${Buffer.byteLength(expected)} bytes.`,
        `Pods: 10,000 × \`Pod.fromManifest(manifest, { worker: new Worker(...), store, env })\` then \`pod.materialize()\` (renders, sets the prompt on the worker, writes the segment_start record into one shared \`MemorySegmentStore\`), all pods kept alive until the heap is measured. Each \`fromManifest\` re-loads and re-hashes the instruction file (a parse reads files to see their current content); the template cache served it: ${pods.cache.hits} hits, ${pods.cache.misses} miss over the 10,000 pods, so all pods share one checked and compiled file. One run (it is the slow one).`,
        "`renderPodPrompt(prepared)`: one `parsePodPrompt` (one parsed template), 10,000 renders through it (AGENTS.md lookup included), each resulting prompt string kept. Median of 3 runs.",
        "Heap: `process.memoryUsage().heapUsed` after two `gc()` calls, before and after, divided by 10,000. Reference: raw Handlebars render of the same template + the same trailing concatenation, flattened, 10,000 strings kept; median of 3 runs.",
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);
