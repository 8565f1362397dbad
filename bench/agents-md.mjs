// Benchmark 3: materializing the system prompt with an AGENTS.md of 0, 16 KiB, 64 KiB and
// over the 64 KiB cap: time and bytes copied, against a raw read + raw render + concat.
import { readFileSync } from "node:fs";
import { mkdir, open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { floorRenderer, trailing } from "./render.mjs";
import { compare, fmtBytes, fmtMs, fmtRatio, importDist, main, met, result, tempDir } from "./lib.mjs";

const { loadManifest } = await importDist("manifest");
const { parsePodPrompt, renderPodPrompt, AGENTS_MD_MAX_BYTES } = await importDist("pod");
const { BUILTIN_PROMPTS_DIR } = await importDist("prompt-loader");

const KiB = 1024;
const SIZES = [
  { label: "0 B (empty file)", bytes: 0 },
  { label: "16 KiB", bytes: 16 * KiB },
  { label: "64 KiB (the cap)", bytes: 64 * KiB },
  { label: "1 MiB (over the cap)", bytes: 1024 * KiB },
];
const NOW = new Date(Date.UTC(2026, 10, 30, 16, 37, 0));
const TOOLS = ["read_file", "write_file", "run_command"];

function agentsText(bytes) {
  const para =
    "## Conventions\n\nUse pnpm. Run `pnpm test` before you report. Keep functions small and name them after what they do.\n\n";
  return para.repeat(Math.ceil(bytes / para.length) + 1).slice(0, bytes);
}

/** The trailing section with AGENTS.md, as the template README specifies it. */
function withAgents(prompt, agents) {
  return `${prompt}\n---\n## Project instructions (AGENTS.md)\n\n${agents}${agents === "" || agents.endsWith("\n") ? "" : "\n"}`;
}

export default async function run(log) {
  const { dir, cleanup } = await tempDir("agents");
  const env = { HOME: dir, XDG_CONFIG_HOME: join(dir, "config") };
  const source = readFileSync(join(BUILTIN_PROMPTS_DIR, "default.md"), "utf8");
  const floor = floorRenderer(source);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    const rows = [];
    const measured = [];
    for (const size of SIZES) {
      const cwd = join(dir, `ws-${size.bytes}`);
      await mkdir(cwd, { recursive: true });
      await writeFile(join(cwd, "AGENTS.md"), agentsText(size.bytes));
      const { manifest } = await loadManifest({ cwd, env, userLayer: false });
      const prepared = await parsePodPrompt(manifest, { env });
      const scope = prepared.scope.toData();
      const data = {
        date: "2026-11-30",
        time: "16:37:00",
        datetime: "2026-11-30T16:37:00Z",
        cwd,
        scope,
        tools: [...TOOLS].sort(),
      };
      const once = await renderPodPrompt(prepared, { tools: TOOLS, now: NOW });
      const file = join(cwd, "AGENTS.md");
      // The floor: read at most cap + 1 bytes with one open/read/close, decode, render raw, concatenate.
      const reference = async () => {
        const handle = await open(file, "r");
        try {
          const buffer = Buffer.allocUnsafe(AGENTS_MD_MAX_BYTES + 1);
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
          const shown = Math.min(bytesRead, AGENTS_MD_MAX_BYTES);
          const text = decoder.decode(buffer.subarray(0, shown));
          const prompt = trailing(floor(data), scope.summary);
          return text === "" ? prompt : withAgents(prompt, text);
        } finally {
          await handle.close();
        }
      };
      const refOut = await reference();
      const samePrefix = once.prompt.startsWith(refOut.slice(0, Math.min(refOut.length, once.prompt.length) - 200));
      log(`AGENTS.md ${size.label}: prompt ${once.prompt.length} chars…`);
      const timing = await compare(
        {
          ours: () => renderPodPrompt(prepared, { tools: TOOLS, now: NOW }),
          reference,
        },
        { time: 500, rounds: 3, batch: 5 },
      );
      measured.push({
        size,
        ours: timing.ours.ms,
        reference: timing.reference.ms,
        agentsBytes: once.agentsMd?.bytes ?? 0,
        truncated: once.agentsMd?.truncated ?? false,
        promptBytes: Buffer.byteLength(once.prompt),
        samePrefix,
      });
    }
    const atCap = measured.find((m) => m.size.bytes === 64 * KiB);
    for (const m of measured) {
      rows.push({
        figure: `AGENTS.md ${m.size.label}: \`materialize\` time`,
        ours: fmtMs(m.ours),
        reference: `read ≤ cap+1 bytes + raw Handlebars + concat: ${fmtMs(m.reference)}`,
        ratio: fmtRatio(m.ours / m.reference),
        goal: "—",
        met: "—",
      });
    }
    const overCap = measured.at(-1);
    rows.push({
      figure: "time over the cap vs at the cap (bounded cost)",
      ours: `${overCap.size.label}: ${fmtMs(overCap.ours)}`,
      reference: `64 KiB: ${fmtMs(atCap.ours)}`,
      ratio: fmtRatio(overCap.ours / atCap.ours),
      goal: "≤ 1.5x",
      met: met(overCap.ours / atCap.ours <= 1.5),
    });
    for (const m of measured) {
      const over = m.size.bytes > AGENTS_MD_MAX_BYTES;
      rows.push({
        figure: `AGENTS.md ${m.size.label}: bytes copied into the prompt`,
        ours: `${fmtBytes(m.agentsBytes)} of AGENTS.md${m.truncated ? " + notice" : ""}; prompt ${fmtBytes(m.promptBytes)}`,
        reference: `file: ${fmtBytes(m.size.bytes)}`,
        ratio: m.size.bytes === 0 ? "—" : fmtRatio(m.agentsBytes / m.size.bytes),
        goal: over ? "≤ 64 KiB" : "all of it",
        met: met(over ? m.agentsBytes <= AGENTS_MD_MAX_BYTES : m.agentsBytes === m.size.bytes),
      });
    }
    return result(3, "AGENTS.md: materialization time and bytes copied", {
      rows,
      notes: [
        "Ours: `renderPodPrompt(prepared, { tools, now })` of @insomnia/pod with the instruction parsed once (`parsePodPrompt`): reads `<cwd>/AGENTS.md` (lstat, realpath, scope check, stat, open, fstat, read ≤ 64 KiB + 1, strict UTF-8 decode, cut at a code point), renders the default instruction, builds the scope summary data and assembles the prompt. The empty file counts as absent (no section).",
        "Reference (the floor): one `open` + one `read` of at most cap + 1 bytes + `close`, strict UTF-8 decode, raw Handlebars render of the same template with pre-formatted data, and the same trailing concatenation. The issue names no goal for the time; the goals shown are that an over-cap file costs no more than one at the cap and that at most 64 KiB are copied.",
        `Output check: the reference prompt equals ours up to the AGENTS.md truncation notice: ${measured.every((m) => m.samePrefix) ? "yes" : "NO"}.`,
        "Median of 3 rotated tinybench rounds, batches of 5 calls.",
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);
