// Benchmark 13: compaction that keeps the prompt cache. A scripted 100-turn conversation with
// tool calls runs through the built `pod` (`pod run` per turn, one conversation) against the
// local fake Anthropic provider, whose scripted usage figures make the pod compact 3 times.
// Every request body that left the machine is fed to the model of Anthropic's prompt cache
// (anthropic-cache-model.mjs); beside it, the same conversation with each compaction request
// built the way OpenCode builds it (no tools, no system prompt).
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AnthropicPromptCache, cacheUsage, sumUsage } from "./anthropic-cache-model.mjs";
import { distFile, importDist, main, met, podBenchEnv, result, ROOT, tempDir } from "./lib.mjs";
import { withoutToolsAndSystem } from "./opencode-reference.mjs";

const { startFakeProvider } = await importDist("ai-sdk", "testing.js");
const { minimumCacheablePrompt } = await importDist("pod");
// The tokenizer `pod prompt --explain` counts with (a dependency of the CLI): resolve it from there.
const fromCli = createRequire(join(ROOT, "packages", "cli", "package.json"));
const { countTokens: o200k } = await import(pathToFileURL(fromCli.resolve("gpt-tokenizer/encoding/o200k_base")).href);

const TURNS = 100;
const MODEL = "claude-sonnet-4-5";
/** A window that the scripted conversation fills about every 26 turns at the default `compact_at` (0.8). */
const CONTEXT_WINDOW = 70_000;
const COMPACT_AT = 0.8;
const FILES = 24;
/** A pause longer than the 5-minute cache lifetime, for the context row on idle users. */
const PAUSE_MS = 6 * 60_000;

const noSpecial = { disallowedSpecial: new Set() };
const counted = new Map();
/** o200k_base token count of a text, memoized (the same blocks come back in every request). */
function countTokens(text) {
  let n = counted.get(text);
  if (n === undefined) {
    n = o200k(text, noSpecial);
    counted.set(text, n);
  }
  return n;
}

const file = (i) => `src/module-${String(i).padStart(2, "0")}.ts`;

/** A source file of 40–120 lines, different for each `i`, so tool results vary in size. */
function source(i) {
  const lines = [`// Module ${i}: part of the scripted workspace the benchmark's pod reads.`];
  const count = 40 + ((i * 37) % 81);
  for (let n = 0; n < count; n++) {
    lines.push(
      n % 8 === 0
        ? `export function step${i}_${n}(input: number): number {`
        : n % 8 === 7
          ? "}"
          : `  const v${n} = input * ${(i * 31 + n * 7) % 97} + ${(n * 13) % 23}; // keeps module ${i} line ${n}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** What the user says in turn `n`. */
const userMessage = (n) =>
  `Turn ${n}: look at ${file(n % FILES)} and tell me what step${n % FILES}_0 returns for 2, and whether the module still compiles.`;

/**
 * The tool calls of turn `n`, one list per model call before the answer: most turns read one
 * file; every third reads two at once; every seventh reads a second file after the first;
 * every tenth lists the directory first.
 */
function plan(n) {
  const read = (i, k) => ({ id: `toolu_${n}_${k}`, name: "read_file", input: { path: file(i % FILES) } });
  if (n % 10 === 0) return [[{ id: `toolu_${n}_0`, name: "list_dir", input: { path: "src" } }], [read(n, 1)]];
  if (n % 7 === 0) return [[read(n, 0)], [read(n + 5, 1)]];
  if (n % 3 === 0) return [[read(n, 0), read(n + 11, 1)]];
  return [[read(n, 0)]];
}

const answer = (n) =>
  `Turn ${n} done: ${file(n % FILES)} compiles, and step${n % FILES}_0(2) returns ${2 * (n % FILES) * 31} plus the constant on its first line. ` +
  `Nothing else in the module depends on it; I changed nothing.`;

/** A summary about as long as the compaction instruction asks for (the fake model's "answer" to it). */
function summary(turn, compaction) {
  const sections = [
    "## Goal",
    `Check, turn by turn, what the exported step functions of src/ return and whether each module compiles (compaction ${compaction}, at turn ${turn}).`,
    "## The user's constraints, in their words",
    '"tell me what step<N>_0 returns for 2, and whether the module still compiles."',
    "## Decisions made",
    "Read each module with read_file; list src/ every tenth turn; change nothing.",
    "## Files and state",
    ...Array.from({ length: FILES }, (_, i) => `- ${file(i)}: read; compiles; step${i}_0(2) = ${2 * i * 31}.`),
    "## Open work",
    `Continue with turn ${turn + 1}.`,
    "## Facts to keep",
    "none",
  ];
  return sections.join("\n");
}

const lastBlock = (body) => {
  const content = body.messages?.at(-1)?.content;
  return typeof content === "string" ? { type: "text", text: content } : content?.at(-1);
};

/** The number of the turn a request belongs to and how many tool steps of it came before. */
function position(body) {
  let steps = 0;
  for (let m = body.messages.length - 1; m >= 0; m--) {
    const message = body.messages[m];
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "assistant" && blocks.some((b) => b.type === "tool_use")) steps++;
    for (const block of blocks) {
      const turn = block.type === "text" && message.role === "user" ? /^Turn (\d+):/.exec(block.text) : null;
      if (turn !== null) return { turn: Number(turn[1]), steps };
    }
  }
  return { turn: 0, steps };
}

/** Runs the conversation; returns the recorded request bodies, their send times and which were compactions. */
async function conversation(log, dir) {
  const ws = join(dir, "ws");
  await mkdir(join(ws, "src"), { recursive: true });
  await mkdir(join(ws, ".insomnia"), { recursive: true });
  for (let i = 0; i < FILES; i++) await writeFile(join(ws, file(i)), source(i));
  const instruction = (await readFile(join(ROOT, "resources", "prompts", "compact.md"), "utf8")).trim();

  // The provider's side: usage from the cache model, so the pod's threshold sees what Anthropic would report.
  const cache = new AnthropicPromptCache({ countTokens, minimumTokens: minimumCacheablePrompt });
  const sentAt = [];
  const compactions = [];
  const server = await startFakeProvider((request, index) => {
    const body = request.json;
    sentAt[index] = Date.now();
    const usage = cache.apply(body, sentAt[index]);
    const last = lastBlock(body);
    const { turn, steps } = position(body);
    let reply;
    if (last?.type === "text" && last.text.trim() === instruction) {
      compactions.push(index);
      reply = { text: summary(turn, compactions.length) };
    } else {
      const calls = plan(turn)[steps];
      reply = calls === undefined ? { text: answer(turn) } : { toolCalls: calls };
    }
    const output = countTokens(reply.text ?? JSON.stringify(reply.toolCalls));
    return { ...reply, usage: { ...usage, output } };
  });
  await writeFile(
    join(ws, ".insomnia", "pod.yaml"),
    [
      "provider:",
      "  kind: anthropic",
      `  model: ${MODEL}`,
      `  base_url: ${server.baseURL}`,
      `  context_window: ${CONTEXT_WINDOW}`,
      "worker:",
      `  compact_at: ${COMPACT_AT}`,
      "",
    ].join("\n"),
  );
  const env = podBenchEnv(dir);
  const bin = distFile("cli", "bin.cjs");
  const pod = (...args) =>
    new Promise((resolve, reject) =>
      execFile(
        process.execPath,
        [bin, ...args],
        { cwd: ws, env, maxBuffer: 256 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error === null ? resolve(stdout) : reject(new Error(`pod ${args[0]}: ${stderr.trim() || error.message}`)),
      ),
    );
  let ledger;
  try {
    for (let n = 1; n <= TURNS; n++) {
      await pod("run", userMessage(n));
      if (n % 20 === 0) log(`turn ${n}: ${server.requests.length} requests, ${compactions.length} compactions`);
    }
    // The pod's own account of the conversation, every segment and summary call included.
    ledger = JSON.parse(await pod("log", "--json")).usage;
  } finally {
    await server.close();
  }
  const bodies = server.requests.map((r) => r.json);
  // COMPACTION_CACHE_DUMP=<file>: the recorded bodies, send times and compaction indexes, to look into a figure.
  const dump = process.env.COMPACTION_CACHE_DUMP;
  if (dump !== undefined) await writeFile(dump, JSON.stringify({ bodies, sentAt, compactions }));
  return { bodies, sentAt, compactions, ledger };
}

/** The three figures of the issue over a sequence of requests and the indexes of its compaction requests. */
function figures(bodies, sentAt, compactions) {
  const usages = cacheUsage(
    bodies.map((body, i) => ({ body, at: sentAt[i] })),
    { countTokens, minimumTokens: minimumCacheablePrompt },
  );
  const all = sumUsage(usages);
  const compacting = sumUsage(compactions.map((i) => usages[i]));
  const perCompaction = compactions.map(
    (i) => usages[i].cacheRead / (usages[i].input + usages[i].cacheRead + usages[i].cacheWrite),
  );
  return {
    usages,
    all,
    compacting,
    compactionRead: compacting.total === 0 ? undefined : compacting.cacheRead / compacting.total,
    leastCompactionRead: perCompaction.length === 0 ? undefined : Math.min(...perCompaction),
    read: all.cacheRead / all.total,
    write: all.cacheWrite / all.total,
  };
}

const pct = (x) => (x === undefined ? "—" : `${(100 * x).toFixed(1)}%`);
const tokens = (n) => n.toLocaleString("en-US");

export default async function run(log) {
  const { dir, cleanup } = await tempDir("compaction-cache");
  try {
    log(`${TURNS} turns through the built pod against the fake provider…`);
    const { bodies, sentAt, compactions, ledger } = await conversation(log, dir);
    const ours = figures(bodies, sentAt, compactions);
    const opencode = bodies.map((body, i) => (compactions.includes(i) ? withoutToolsAndSystem(body) : body));
    const reference = figures(opencode, sentAt, compactions);
    // The same requests had the user been away longer than the cache lives before each turn that compacts.
    const paused = sentAt.map((at, i) => at + PAUSE_MS * compactions.filter((c) => c <= i).length);
    const oursPaused = figures(bodies, paused, compactions);
    const referencePaused = figures(opencode, paused, compactions);
    const done = compactions.length;
    // The turn each compaction came before (or inside): the turn of the request that follows it.
    const turns = compactions.map((i) => (bodies[i + 1] === undefined ? "end" : position(bodies[i + 1]).turn));
    log(`${bodies.length} requests, ${done} compactions`);
    const rows = [
      {
        figure: `compactions in the scripted ${TURNS}-turn conversation (${bodies.length} requests)`,
        ours: `${done}${done === 0 ? "" : ` (at turns ${turns.join(", ")})`}`,
        reference: "3",
        ratio: "—",
        goal: "3",
        met: met(done === 3),
      },
      {
        figure: "compaction requests: input read from the cache",
        ours: `${pct(ours.compactionRead)} (${tokens(ours.compacting.cacheRead)} of ${tokens(ours.compacting.total)} tokens)`,
        reference: `OpenCode-style (no tools, no system prompt): ${pct(reference.compactionRead)} (${tokens(reference.compacting.cacheRead)} of ${tokens(reference.compacting.total)})`,
        ratio: `${pct(ours.compactionRead)} vs ${pct(reference.compactionRead)}`,
        goal: "≥ 90%",
        met: met(ours.compactionRead !== undefined && ours.compactionRead >= 0.9),
      },
      {
        figure: "(context) the least of the compaction requests, each alone",
        ours: pct(ours.leastCompactionRead),
        reference: `OpenCode-style: ${pct(reference.leastCompactionRead)}`,
        ratio: `${pct(ours.leastCompactionRead)} vs ${pct(reference.leastCompactionRead)}`,
        goal: "—",
        met: "—",
      },
      {
        figure: "whole conversation: input read from the cache",
        ours: `${pct(ours.read)} (${tokens(ours.all.cacheRead)} of ${tokens(ours.all.total)} tokens)`,
        reference: `OpenCode-style: ${pct(reference.read)} (${tokens(reference.all.cacheRead)} of ${tokens(reference.all.total)})`,
        ratio: `${pct(ours.read)} vs ${pct(reference.read)}`,
        goal: "≥ 85%",
        met: met(ours.read >= 0.85),
      },
      {
        figure: "whole conversation: cache writes as a share of input",
        ours: `${pct(ours.write)} (${tokens(ours.all.cacheWrite)} tokens)`,
        reference: `OpenCode-style: ${pct(reference.write)} (${tokens(reference.all.cacheWrite)})`,
        ratio: `${pct(ours.write)} vs ${pct(reference.write)}`,
        goal: "≤ 10%",
        met: met(ours.write <= 0.1),
      },
      {
        figure: "(context) compaction requests: cache writes as a share of their input",
        ours: pct(ours.compacting.total === 0 ? undefined : ours.compacting.cacheWrite / ours.compacting.total),
        reference: `OpenCode-style: ${pct(reference.compacting.total === 0 ? undefined : reference.compacting.cacheWrite / reference.compacting.total)}`,
        ratio: "—",
        goal: "—",
        met: "—",
      },
      {
        figure:
          "(check) the pod's own ledger (`pod log --json`, every segment): model calls, input tokens, cache reads and writes",
        ours: `${ledger.calls} calls, ${tokens(ledger.inputTokens)} input (${tokens(ledger.cacheReadTokens)} read, ${tokens(ledger.cacheWriteTokens)} written)`,
        reference: `the cache model over the recorded requests: ${bodies.length} requests, ${tokens(ours.all.total)} (${tokens(ours.all.cacheRead)}, ${tokens(ours.all.cacheWrite)})`,
        ratio: "—",
        goal: "the same",
        met: met(
          ledger.calls === bodies.length &&
            ledger.inputTokens === ours.all.total &&
            ledger.cacheReadTokens === ours.all.cacheRead &&
            ledger.cacheWriteTokens === ours.all.cacheWrite,
        ),
      },
      {
        figure: `(context) the same conversation had the user paused ${PAUSE_MS / 60_000} minutes before each turn that compacts (the 5-minute cache expired): compaction requests read from the cache; whole conversation`,
        ours: `${pct(oursPaused.compactionRead)}; ${pct(oursPaused.read)}`,
        reference: `OpenCode-style: ${pct(referencePaused.compactionRead)}; ${pct(referencePaused.read)}`,
        ratio: "—",
        goal: "—",
        met: "—",
      },
    ];
    return result(13, "Compaction that keeps the prompt cache", {
      rows,
      notes: [
        `The conversation: ${TURNS} \`pod run "Turn N: …"\` processes in one workspace (one conversation; \`node packages/cli/dist/bin.cjs\`, anthropic, \`${MODEL}\`, \`provider.context_window: ${CONTEXT_WINDOW}\`, \`worker.compact_at: ${COMPACT_AT}\`), the builtin instruction and the 4 file tools, against the local fake provider (\`startFakeProvider\` from \`@insomnia/ai-sdk/testing\`), which records every request body. Its script: most turns read one of ${FILES} source files (40–120 lines) with \`read_file\`, every third reads two at once, every seventh reads a second one after the first, every tenth lists \`src\` first; then a one-sentence answer. A request that ends with the compaction instruction (\`resources/prompts/compact.md\`) is answered with a summary under the instruction's headings (about 500 tokens).`,
        "The usage figures the fake provider reports are the cache model's for the request (plus the answer's tokens as output), so the pod's threshold sees what Anthropic would report; the compactions happen where the pod's own threshold check puts them. The check row compares the pod's own ledger (`pod log --json` after the last turn, all segments and the summary calls) with the model's totals over the recorded requests: every call was logged and counted with the usage the provider reported.",
        "The cache model (`bench/anthropic-cache-model.mjs`, tested in `test/anthropic-cache-model.test.ts`) applies Anthropic's documented rules to the recorded bodies: the prefix in the order tools → system → messages up to a `cache_control` breakpoint (at most 4), read from the longest cached prefix that ends at a breakpoint or up to 20 blocks before it, written only when at least the model's minimum cacheable length (`minimumCacheablePrompt` of `@insomnia/pod`: 1,024 tokens for this model), entries living 5 minutes from their last use (the requests' real send times: the run takes about 2 minutes, so none expires), `cache_control` itself not part of the prefix. Tokens are estimated with o200k_base (`gpt-tokenizer`, as `pod prompt --explain` counts): text blocks by their text, tool calls by their name and input JSON, tool results by their text, tool definitions by their JSON. Claude's own tokenizer counts differently; the shares are what the figures are about.",
        "The reference is built from the recorded requests by OpenCode's rule (its summary call sends `tools: {}` and `system: []`, `session/compaction.ts`): each recorded compaction request with `tools`, `tool_choice` and `system` removed, its messages (the conversation and the instruction, with the same breakpoint on the last one) unchanged, every other request as recorded; the whole sequence is fed to a fresh cache model. OpenCode's other differences (its own summary prompt, pruning old tool outputs first) are left out, so the reference differs from ours only in what the issue names. The ratio column puts our share and the reference's side by side.",
        `The pause row feeds the same bodies with every request from each compaction on sent ${PAUSE_MS / 60_000} minutes later: the pod compacts before the first call of the turn after the one that crossed the threshold, so a user who comes back after the cache expired gets a compaction request that reads nothing, like the reference's. Tokens vary by a few between runs: the builtin instruction carries the date and time.`,
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);
