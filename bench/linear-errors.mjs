// Benchmark 7: reporting errors costs time linear in the input (issue 19). The template's
// syntax-error locator on runs of `{{[` (each `[` without a `]` after it), and manifest
// validation of a layer with many unknown keys, each at four sizes: the cost per KiB (per
// key) must stay flat, side by side with a reference that is linear itself.
import { createRequire } from "node:module";
import { join } from "node:path";
import Handlebars from "handlebars";
import { compare, fmtMs, fmtRatio, importDist, main, met, ROOT, result } from "./lib.mjs";

const { SystemPromptTemplate, SystemPromptError } = await importDist("template");
const { validateManifestLayer } = await importDist("manifest");
// yaml is a dependency of @insomnia/manifest, not of the repository root.
const yaml = createRequire(join(ROOT, "packages", "manifest", "package.json"))("yaml");

const LOCATOR_REPEATS = [43_690, 87_381, 174_762, 349_525]; // 128 KiB … 1 MiB of `{{[`
const KEY_COUNTS = [2_500, 5_000, 10_000, 20_000];
const FLAT = 1.5;

/** A loader holding one file in memory, so the figures are the template's work, not file I/O. */
function memoryLoader(text) {
  return {
    load: async (ref) => {
      const parsed = typeof ref === "string" ? { canonical: ref, prefix: "workspace", path: "main" } : ref;
      return { ref: parsed, text, file: "/mem/main.md", sha256: "0".repeat(64) };
    },
  };
}

/** parse must fail with SYNTAX at 1:1; anything else means the benchmark measures the wrong thing. */
async function locate(text) {
  try {
    await SystemPromptTemplate.parse("$workspace/main", memoryLoader(text));
  } catch (error) {
    if (SystemPromptError.is(error) && error.code === "SYNTAX" && error.line === 1 && error.column === 1) return;
    throw error;
  }
  throw new Error("the template parsed");
}

function handlebarsFails(text) {
  try {
    Handlebars.parse(text);
  } catch {
    return;
  }
  throw new Error("Handlebars parsed it");
}

function unknownKeys(count) {
  let text = "worker:\n";
  for (let i = 0; i < count; i++) text += `  k${i}: 1\n`;
  return text;
}

function validate(text) {
  const checked = validateManifestLayer(text, ".insomnia/pod.yaml");
  if (checked.ok || checked.issues.length !== 100 || checked.issues[0].code !== "UNKNOWN_KEY") {
    throw new Error(`unexpected result: ${checked.ok ? "ok" : `${checked.issues.length} issues`}`);
  }
}

function yamlFloor(text) {
  const doc = yaml.parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) throw new Error("the reference YAML did not parse");
}

export async function run(log) {
  const rows = [];
  const notes = [];

  log(`syntax-error locator on ${LOCATOR_REPEATS.join(", ")} repeats of {{[ …`);
  const locator = [];
  for (const repeats of LOCATOR_REPEATS) {
    const text = "{{[".repeat(repeats);
    const kib = text.length / 1024;
    // Each size starts from a collected heap, so garbage from the size before is not billed to it.
    globalThis.gc?.();
    const t = await compare(
      { ours: () => locate(text), reference: () => handlebarsFails(text) },
      { time: 400, rounds: 3, iterations: 10, warmupIterations: 2 },
    );
    locator.push({ repeats, kib, ours: t.ours.ms / kib, reference: t.reference.ms / kib, total: t.ours.ms });
  }
  // Handlebars' own failing parse is linear (one scan to the end of the file), so the ratio
  // to it stays flat exactly when the locator is linear, whatever the machine's load does
  // to the absolute times.
  const [firstLocator] = locator;
  for (const l of locator) {
    const drift = l.ours / l.reference / (firstLocator.ours / firstLocator.reference);
    const last = l === locator.at(-1);
    rows.push({
      figure: `\`parse\` of ${l.repeats.toLocaleString("en")} × \`{{[\` (${l.kib.toFixed(0)} KiB) → SYNTAX at 1:1, per KiB`,
      ours: `${fmtMs(l.ours)}/KiB (${fmtMs(l.total)} in all)`,
      reference: `Handlebars.parse failing: ${fmtMs(l.reference)}/KiB`,
      ratio: `${fmtRatio(l.ours / l.reference)} (${fmtRatio(drift)} of the 128 KiB run's ratio)`,
      goal: last ? `linear (ratio ≤ ${FLAT}x the 128 KiB run's)` : "—",
      met: last ? met(drift <= FLAT) : "—",
    });
  }

  log(`manifest validation of ${KEY_COUNTS.join(", ")} unknown keys under worker: …`);
  const manifest = [];
  for (const count of KEY_COUNTS) {
    const text = unknownKeys(count);
    globalThis.gc?.();
    const t = await compare(
      { ours: () => validate(text), reference: () => yamlFloor(text) },
      { time: 400, rounds: 3, iterations: 10, warmupIterations: 2 },
    );
    manifest.push({ count, kib: text.length / 1024, ours: t.ours.ms / count, reference: t.reference.ms / count });
  }
  const [firstManifest] = manifest;
  for (const m of manifest) {
    const drift = m.ours / firstManifest.ours;
    const last = m === manifest.at(-1);
    rows.push({
      figure: `\`validateManifestLayer\` of ${m.count.toLocaleString("en")} unknown keys (${m.kib.toFixed(0)} KiB), per key`,
      ours: `${fmtMs(m.ours)}/key`,
      reference: `yaml \`parseDocument\` alone: ${fmtMs(m.reference)}/key`,
      ratio: `${fmtRatio(m.ours / m.reference)}; per key ${fmtRatio(drift)} of the 2,500-key run`,
      goal: last ? `linear (per key ≤ ${FLAT}x the 2,500-key run)` : "—",
      met: last ? met(drift <= FLAT) : "—",
    });
  }

  notes.push(
    "Locator: `SystemPromptTemplate.parse` of one in-memory file (no file I/O) made of `{{[` repeated, which must fail with `SYNTAX` at 1:1: Handlebars' parse fails, the per-file statement count stops at the first INVALID token, the locator lexes and re-parses up to it. Before issue 19 the locator lexed past every `[`, each of which scans to the end of the file: 5k / 10k / 20k / 40k repeats took 0.27 / 0.95 / 3.9 / 18.3 s, and the 1 MiB run did not finish. Reference: `Handlebars.parse` failing on the same text.",
    "Manifest: `validateManifestLayer` of `worker:` with that many unknown keys, which reports the first 100 (the cap) in file order. Before issue 19 yaml's unique-key check compared every key with every earlier one and each issue counted lines from the start of the file: 5k / 10k / 20k keys took 0.8 / 2.9 / 9.3 s. Reference: yaml's `parseDocument` of the same text without that check, the floor of reading it.",
    "Each size: median of 3 rotated tinybench rounds, from a collected heap. Manifest goal: the cost per key at the largest size against the smallest. Locator goal: the ratio to Handlebars' own (linear) failing parse at the largest size against the smallest, since on a shared machine the absolute cost per KiB of both sides moves with the load.",
  );
  return result(7, "Errors located in linear time", { rows, notes });
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);
