// Benchmark: live turns (issue 29). Time from the provider's first text byte to the same text
// at the consumer: `pod run`'s stdout and `pod.run`'s onEvent (through our worker and client),
// against the AI SDK's own `streamText` reading the same stream. One local server speaks
// Anthropic's SSE: it sends the answer's head, waits a moment so every reader is idle on its
// socket, stamps the clock and writes the first text delta; the reader stamps the clock when that
// text reaches it. Same process, same clock (for `pod run`: when its stdout pipe delivers the text).
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import {
  distFile,
  fmtMs,
  fmtRatio,
  importDist,
  main,
  median,
  met,
  podBenchEnv,
  result,
  ROOT,
  tempDir,
} from "./lib.mjs";
import { anthropicStreamHead, anthropicStreamTail, anthropicTextDelta } from "./anthropic-stream.mjs";

const { aiSdkClient } = await importDist("ai-sdk");
const { Worker } = await importDist("worker");
const fromAiSdk = createRequire(join(ROOT, "packages", "ai-sdk", "package.json"));
const { createAnthropic } = await import(pathToFileURL(fromAiSdk.resolve("@ai-sdk/anthropic")).href);
const { streamText } = await import("ai");

const MARK = "MARK-first-text";
const SAMPLES = Number(process.env.LIVE_TURN_SAMPLES ?? 25);
const PROCESS_SAMPLES = Number(process.env.LIVE_TURN_PROCESS_SAMPLES ?? 12);

const HEAD = anthropicStreamHead({ input_tokens: 10, output_tokens: 1 });
const TEXT = anthropicTextDelta(MARK);
const TAIL = anthropicTextDelta(" and the rest.") + anthropicStreamTail(5);

/** The server; `firstTextAt` is the clock when the last request's first text byte was written. */
async function startServer() {
  const state = { firstTextAt: 0, gapMs: 20 };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(HEAD);
      // Long enough for the reader to be parked on its socket, short against a sample.
      setTimeout(() => {
        state.firstTextAt = performance.now();
        res.write(TEXT);
        res.end(TAIL);
      }, state.gapMs);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseURL = `http://127.0.0.1:${server.address().port}/v1`;
  return { state, baseURL, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function run(log) {
  const server = await startServer();
  const { dir, cleanup } = await tempDir("live-turn");
  try {
    const model = () => createAnthropic({ baseURL: server.baseURL, apiKey: "k" })("claude-sonnet-4-5");
    const messages = [{ role: "user", content: "hello" }];

    async function viaStreamText() {
      const stream = streamText({ model: model(), system: "You are terse.", messages, maxRetries: 0 });
      for await (const text of stream.textStream) {
        if (text.includes(MARK)) {
          const at = performance.now();
          for await (const _ of stream.textStream) {
            // drain
          }
          return at - server.state.firstTextAt;
        }
      }
      throw new Error("streamText never saw the text");
    }

    const worker = new Worker({ client: aiSdkClient(model(), { maxRetries: 0 }) });
    worker.setSystemPrompt("You are terse.");
    async function viaOnEvent() {
      worker.setHistory([]);
      let at = 0;
      await worker.run("hello", {
        onEvent: (event) => {
          if (at === 0 && event.type === "text-delta" && event.text.includes(MARK)) at = performance.now();
        },
      });
      return at - server.state.firstTextAt;
    }

    log(`${SAMPLES} × (streamText, pod.run onEvent), alternating…`);
    const reference = [];
    const onEvent = [];
    for (let i = 0; i < 3; i++) {
      await viaStreamText();
      await viaOnEvent();
    }
    for (let i = 0; i < SAMPLES; i++) {
      reference.push(await viaStreamText());
      onEvent.push(await viaOnEvent());
    }

    // `pod run` in its own process: the text reaches its stdout pipe.
    const ws = join(dir, "ws");
    await mkdir(join(ws, ".insomnia"), { recursive: true });
    await writeFile(
      join(ws, ".insomnia", "pod.yaml"),
      `provider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: ${server.baseURL}\n`,
    );
    const env = podBenchEnv(dir);
    const bin = distFile("cli", "bin.cjs");
    const child = join(ROOT, "bench", "live-turn-child.mjs");
    const firstTextOnStdout = (args) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, { cwd: ws, env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let at = 0;
        child.stdout.setEncoding("utf8").on("data", (chunk) => {
          out += chunk;
          if (at === 0 && out.includes(MARK)) at = performance.now();
        });
        let err = "";
        child.stderr.setEncoding("utf8").on("data", (chunk) => (err += chunk));
        child.on("close", (code) =>
          code === 0 && at !== 0
            ? resolve(at - server.state.firstTextAt)
            : reject(new Error(`${args[1]} failed: ${err}`)),
        );
      });
    const podRun = () => firstTextOnStdout([bin, "run", "--new", "hello"]);
    const sdkProcess = () => firstTextOnStdout([child, server.baseURL]);
    log(`${PROCESS_SAMPLES} × (pod run --new hello, a streamText process), alternating…`);
    // A new process finishes loading and compiling after its request is sent: wait until it is idle.
    server.state.gapMs = 300;
    await podRun();
    await sdkProcess();
    const stdout = [];
    const sdkStdout = [];
    for (let i = 0; i < PROCESS_SAMPLES; i++) {
      stdout.push(await podRun());
      sdkStdout.push(await sdkProcess());
    }

    const rows = [
      {
        figure: "first text byte → `pod.run` onEvent (our worker + client, in process)",
        ms: median(onEvent),
        ref: median(reference),
        what: "`streamText` textStream, in process",
      },
      {
        figure: "first text byte → `pod run`'s stdout (a new process, read through its pipe)",
        ms: median(stdout),
        ref: median(sdkStdout),
        what: "a new process writing `streamText`'s textStream to stdout",
      },
    ].map(({ figure, ms, ref, what }) => ({
      figure,
      ours: fmtMs(ms),
      reference: `${what}: ${fmtMs(ref)}`,
      ratio: fmtRatio(ms / ref),
      goal: "≤ 1.2x",
      met: met(ms / ref <= 1.2),
    }));
    return result(12, "Live turns: first text byte to the reader", {
      rows,
      notes: [
        `A local server writes an Anthropic SSE answer's head, waits 20 ms (300 ms for \`pod run\`, a new process still loading modules after its request went out), stamps the clock and writes the first text delta; each reader stamps the clock when that text reaches it. ${SAMPLES} alternating samples of \`streamText\` (ai ${createRequire(join(ROOT, "package.json"))("ai/package.json").version}) and of \`worker.run(…, { onEvent })\` over \`aiSdkClient\`, and ${PROCESS_SAMPLES} of \`pod run --new hello\` (the bin, its stdout a pipe read by the bench), medians.`,
        "The `pod run` row's reference is bench/live-turn-child.mjs: `streamText` in a new process, each chunk written to stdout, read the same way; both pay a cold process's first run of the stream-parsing code.",
      ],
    });
  } finally {
    await server.close();
    await cleanup();
  }
}

await main(run);
