import type { PodManifest } from "@insomnia/manifest";
import { checkWorkspaceTrust, loadManifest } from "@insomnia/manifest";
import type { Clock, Notifier, Pod } from "@insomnia/pod";
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { AssistantMessage, ImagePart, TurnResult, UserInput } from "@insomnia/worker";
import type { CompactionReport } from "@insomnia/pod";
import { compactionLine } from "../compaction-line.ts";
import { totalsJson } from "../ledger-view.ts";
import type { CompactOptions, ResumeOptions, RunOptions, StoreOptions } from "../args.ts";
import { CliError } from "../cli-error.ts";
import type { CliIo } from "../io.ts";
import { liveOutput } from "../live-output.ts";
import { manifestLoadOptions } from "../manifest-input.ts";
import { formatProblemLine, styleFor } from "../output.ts";
import type { Style } from "../output.ts";
import { openPodStore, type PodStore, promptCacheKey } from "../pod-store.ts";
import { apiKey, languageModel, type ProviderChoice, providerChoice } from "../provider-model.ts";
import { findConversation } from "../conversations.ts";
import { activityLines, usageLine, writeWarning } from "../run-report.ts";
import { registerMcpTools } from "../mcp-tools.ts";
import { podToolFactories } from "../pod-tool-factories.ts";
import type { RunMcpTools } from "../mcp-tools.ts";
import { hideSecret } from "../shown-text.ts";
import { resolveWorkspaceDir } from "../workspace-dir.ts";
import { conversationRoot } from "../trace-conversation.ts";
import type { Tracing } from "../tracing.ts";
import { FORCED_EXIT_FLUSH_MS, flushTracing, providerServer, startTracing } from "../tracing.ts";

/** Exit status after Ctrl-C stopped a turn (128 + SIGINT, as shells report it). */
export const EXIT_INTERRUPTED = 130;
/** Exit status after SIGTERM stopped a turn (128 + SIGTERM). */
const EXIT_TERMINATED = 143;

/** `pod run`: sends one user message to the manifest's model, continuing the latest conversation unless `--new`. */
export async function runRun(options: RunOptions, io: CliIo): Promise<number> {
  preload();
  // Images first: a bad one is a usage error before anything is read from stdin or sent.
  const images = await readImages(options.images ?? [], io.cwd);
  const text = await readInput(options.input, io);
  const input: UserInput | string = images.length === 0 ? text : { text, images };
  return traced(io, (tracing) =>
    session(options, io, { input, fresh: options.new, reasoning: options.reasoning === true, tracing }),
  );
}

/** `pod resume`: continues an interrupted turn of the latest conversation. */
export async function runResume(options: ResumeOptions, io: CliIo): Promise<number> {
  preload();
  return traced(io, (tracing) => session(options, io, { reasoning: options.reasoning === true, tracing }));
}

/** Runs a command with spans exported when an OTLP endpoint is configured, flushed before it returns or throws. */
async function traced(io: CliIo, command: (tracing: Tracing | undefined) => Promise<number>): Promise<number> {
  const tracing = await startTracing(io.env, (warning) => writeWarning(io, styleFor(io.stderr, io.env), warning));
  try {
    return await command(tracing);
  } finally {
    await flushTracing(tracing);
  }
}

/** `pod compact`: compacts the latest conversation now, the way a long one is compacted on its own. */
export async function runCompact(options: CompactOptions, io: CliIo): Promise<number> {
  preload();
  return traced(io, (tracing) => session(options, io, { reasoning: false, compact: { json: options.json }, tracing }));
}

/** Reads and checks each `--image FILE` (png, jpeg, gif, webp by their bytes; at most 5 MiB). */
async function readImages(files: readonly string[], cwd: string): Promise<ImagePart[]> {
  if (files.length === 0) return [];
  const { imagePart, MAX_IMAGE_BYTES } = await import("@insomnia/worker");
  const images: ImagePart[] = [];
  for (const file of files) {
    const path = resolve(cwd, file);
    let bytes: Buffer;
    try {
      const info = await stat(path);
      if (!info.isFile()) throw new Error("it is not a regular file");
      if (info.size > MAX_IMAGE_BYTES) {
        throw new Error(`it is ${info.size} bytes, over the limit of ${MAX_IMAGE_BYTES} (5 MiB); make it smaller`);
      }
      bytes = await readFile(path);
    } catch (cause) {
      throw new CliError(
        "INVALID_IMAGE",
        `--image ${file}: cannot be sent: ${(cause as Error).message}; nothing was sent`,
        {
          file: path,
          cause,
        },
      );
    }
    const image = imagePart(bytes);
    if (typeof image === "string") {
      throw new CliError("INVALID_IMAGE", `--image ${file}: ${image}; nothing was sent`, { file: path });
    }
    images.push(image);
  }
  return images;
}

// The AI SDK is most of a cold start: start reading its files while the manifest is read.
let preloading = false;
function preload(): void {
  if (preloading) return;
  preloading = true;
  Promise.all([import("@insomnia/ai-sdk"), import("@insomnia/worker"), import("@insomnia/pod")]).catch(() => undefined);
}

async function readInput(words: readonly string[], io: CliIo): Promise<string> {
  if (words.length > 0) return words.join(" ");
  const stdin = io.stdin ?? process.stdin;
  if (stdin.isTTY === true) {
    throw new CliError(
      "USAGE",
      "pod run needs a message: pod run <words...>, or pipe it on stdin (see 'pod run --help')",
    );
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") throw new CliError("USAGE", "the message on stdin is empty (see 'pod run --help')");
  return text.replace(/\r?\n$/, "");
}

/**
 * The first Ctrl-C (SIGINT) or SIGTERM stops the turn (what was logged stays, MCP servers are
 * stopped in order); a second one ends the process, after sending the spans that ended (for a
 * moment at most). `exitStatus` is 128 + the signal's number.
 */
function interruption(
  io: CliIo,
  tracing: Tracing | undefined,
): { signal: AbortSignal; exitStatus: number; stop(): void } {
  if (io.signal !== undefined) return { signal: io.signal, exitStatus: EXIT_INTERRUPTED, stop() {} };
  const controller = new AbortController();
  const state = { signal: controller.signal, exitStatus: EXIT_INTERRUPTED, stop: () => {} };
  const on = (status: number) => (): void => {
    if (controller.signal.aborted) {
      void flushTracing(tracing, FORCED_EXIT_FLUSH_MS).finally(() => process.exit(status));
      return;
    }
    state.exitStatus = status;
    controller.abort();
  };
  const onSigint = on(EXIT_INTERRUPTED);
  const onSigterm = on(EXIT_TERMINATED);
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  state.stop = () => {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
  };
  return state;
}

type SessionOptions = StoreOptions & { now?: Date };
/** A `pod run` turn (`input` set) or a `pod resume` (no input). */
type Turn = {
  input?: string | UserInput;
  fresh?: boolean;
  reasoning: boolean;
  compact?: { json: boolean };
  tracing?: Tracing | undefined;
};

async function session(options: SessionOptions, io: CliIo, turn: Turn): Promise<number> {
  const cwd = await resolveWorkspaceDir(options.cwd, io.cwd);
  const { manifest, origins } = await loadManifest(manifestLoadOptions(options, cwd, io));
  // Before any file is read, any store opened or any byte sent: a checkout may narrow, never widen.
  checkWorkspaceTrust(manifest, { env: { ...io.env } });
  const choice = providerChoice(manifest, origins, io);
  const key = await apiKey(choice, origins, io);
  // A provider that repeats the key in an error body must not get it printed.
  hideSecret(key);
  const opened = await openPodStore(options.store, manifest, io);
  try {
    // One writer per pod: whether to continue the latest conversation is decided under its lock.
    const podLock = await opened.store.lockPod();
    try {
      for (const warning of podLock.warnings) writeWarning(io, styleFor(io.stderr, io.env), warning);
      return await converse({ ...opened, choice, key, manifest, options, turn, io });
    } finally {
      await podLock.release();
    }
  } finally {
    await opened.close?.();
  }
}

interface Conversation extends PodStore {
  choice: ProviderChoice;
  key: string | undefined;
  manifest: PodManifest;
  options: SessionOptions;
  turn: Turn;
  io: CliIo;
}

/** One turn (or a resume) of the pod whose log is in `store`. */
async function converse({ store, location, choice, key, manifest, options, turn, io }: Conversation): Promise<number> {
  const style = styleFor(io.stderr, io.env);
  const resuming = turn.input === undefined && turn.compact === undefined;
  const latest =
    turn.fresh === true
      ? undefined
      : options.conversation !== undefined
        ? (await findConversation(store, options.conversation, location, (w) => writeWarning(io, style, w))).head
        : await store.latestSegment();
  if ((resuming || turn.compact !== undefined) && latest === undefined) {
    throw new CliError(
      "NO_CONVERSATION",
      `no conversation to ${resuming ? "resume" : "compact"} in ${location}; start one with pod run <message>`,
      {
        file: location,
      },
    );
  }

  // Spans name the conversation as pod log does (its first segment); only looked up when they are exported.
  const conversationId =
    turn.tracing === undefined || latest === undefined ? undefined : await conversationRoot(store, latest);
  const [
    { aiSdkClient, AiSdkError, DEFAULT_MAX_RETRIES },
    { Worker, WorkerError, contentCaptureFromEnv },
    { Pod, SUMMARY_PREFIX, callCost, priceOf, usageTotals },
    { PromptLoader },
    model,
  ] = await Promise.all([
    import("@insomnia/ai-sdk"),
    import("@insomnia/worker"),
    import("@insomnia/pod"),
    import("@insomnia/prompt-loader"),
    languageModel(choice, key, io.env),
  ]);
  const interrupt = interruption(io, turn.tracing);
  let pod: Pod | undefined;
  let mcp: RunMcpTools | undefined;
  try {
    const reasoning = manifest.provider?.reasoning;
    const client = aiSdkClient(model, {
      maxOutputTokens: manifest.worker.max_tokens,
      temperature: manifest.worker.temperature,
      ...(reasoning === undefined
        ? {}
        : { reasoning: { effort: reasoning.effort, budgetTokens: reasoning.budget_tokens } }),
      // OpenAI's prompt_cache_key: one per pod segment, so a conversation's requests share a cache.
      cacheKey: () => (pod?.segmentId === undefined ? undefined : promptCacheKey(manifest, pod.segmentId)),
      onWarning: (warning) => writeWarning(io, style, { code: "PROVIDER_WARNING", message: warning.message }),
    });
    const worker = new Worker({
      client,
      maxIterations: manifest.worker.max_turns,
      telemetry: {
        providerName: choice.kind,
        requestModel: choice.model,
        ...providerServer(choice.kind, choice.baseURL),
        agentName: manifest.pod.name,
        // A new conversation's id is its first segment, created when the first turn starts.
        conversationId: () => conversationId ?? pod?.segmentId,
        captureMessageContent: contentCaptureFromEnv(io.env),
      },
    });
    mcp = registerMcpTools(worker, {
      manifest,
      env: io.env,
      onWarning: (warning) => writeWarning(io, style, warning),
      signal: interrupt.signal,
    });
    const frozenMcp = mcp;
    const notifier: Notifier = { warn: (warning) => writeWarning(io, style, warning) };
    const tools = podToolFactories(manifest, { env: io.env, warn: (warning) => writeWarning(io, style, warning) });
    const clock: Clock | undefined = options.now === undefined ? undefined : { now: () => new Date(options.now!) };
    const env = { ...io.env };
    // Every summary call counts in this run's usage line, applied or not.
    const compactions: CompactionReport[] = [];
    let clearStatus = (): void => undefined;
    const onCompaction = (report: CompactionReport): void => {
      compactions.push(report);
      if (report.outcome !== "applied" || turn.compact !== undefined) return;
      clearStatus();
      io.stderr.write(
        `pod: ${compactionLine(report, usageTotals([{ usage: report.usage, costUsd: callCost(report.usage, price()) }]))}\n`,
      );
    };
    const price = () => priceOf(manifest.provider?.model, manifest.provider?.pricing);
    const summaryCalls = () => compactions.map((c) => ({ usage: c.usage, costUsd: callCost(c.usage, price()) }));
    pod =
      latest === undefined
        ? await Pod.fromManifest(manifest, {
            worker,
            store,
            notifier,
            env,
            onCompaction,
            tools,
            ...(clock === undefined ? {} : { clock }),
          })
        : await Pod.restore(store, latest, worker, {
            loader: PromptLoader.forPod({ cwd: manifest.pod.pwd, env }),
            notifier,
            provider: manifest.provider,
            env,
            onCompaction,
            onSegmentStart: (start) => frozenMcp.freezeFrom(start),
            tools,
            manifest,
            ...(clock === undefined ? {} : { clock }),
          });
    if (turn.compact !== undefined) {
      const report = await pod.compact();
      io.stdout.write(
        turn.compact.json
          ? `${JSON.stringify({ ...report, usage: totalsJson(usageTotals(summaryCalls())) }, null, 2)}\n`
          : `${compactionLine(report, usageTotals([{ usage: report.usage, costUsd: callCost(report.usage, price()) }]))}\n`,
      );
      return 0;
    }
    const history = worker.getHistory();
    const last = history.at(-1);
    // A compacted segment starts with its summary, a user message that is not waiting for an answer.
    const onlySummary = history.length === 1 && last?.role === "user" && last.content.startsWith(SUMMARY_PREFIX);
    if (!resuming && last?.role === "user" && !onlySummary) {
      writeWarning(io, style, {
        code: "TURN_UNFINISHED",
        message: "the previous message got no answer yet (pod resume retries it); this one is added after it",
      });
    }
    const live = liveOutput(io, style, {
      model: choice.model,
      reasoning: turn.reasoning,
      maxAttempts: DEFAULT_MAX_RETRIES + 1,
    });
    // This turn's model calls (a compaction replaces the history, so they are collected as they come).
    const turnCalls: AssistantMessage[] = [];
    worker.addMessageListener((message) => {
      if (message.role === "assistant") turnCalls.push(message);
      const lines = activityLines(message, style);
      if (lines.length > 0) live.beforeStderr();
      for (const line of lines) io.stderr.write(line);
    });

    clearStatus = () => live.beforeStderr();
    let result: TurnResult;
    // The model calls this turn made before it failed still cost tokens: say how many.
    const usageSoFar = (): void => {
      const price = priceOf(manifest.provider?.model, manifest.provider?.pricing);
      const calls = [
        ...turnCalls.map((m) => ({ usage: m.usage, costUsd: callCost(m.usage, price) })),
        ...summaryCalls(),
      ];
      if (calls.length > 0) io.stderr.write(`pod: ${usageLine(usageTotals(calls))}\n`);
    };
    try {
      const perTurn = { signal: interrupt.signal, onEvent: live.onEvent };
      result = resuming ? await pod.resume(perTurn) : await pod.run(turn.input!, perTurn);
    } catch (error) {
      live.finish();
      if (WorkerError.is(error) && error.code === "ABORTED") {
        io.stderr.write(
          `pod: interrupted: what was logged is kept${live.printed ? " (the answer so far, marked interrupted)" : ""}; pod resume continues, pod run <message> goes on after it\n`,
        );
        usageSoFar();
        return interrupt.exitStatus;
      }
      const cause: unknown = WorkerError.is(error) ? error.cause : error;
      if (AiSdkError.is(cause)) {
        fail(io, style, cause.code, `${cause.detail}; the conversation is kept: pod resume retries this turn`);
        usageSoFar();
        return 1;
      }
      if (WorkerError.is(error) && error.code === "MAX_ITERATIONS") {
        fail(
          io,
          style,
          "MAX_TURNS",
          `the model still asked for tools after ${manifest.worker.max_turns} model calls (worker.max_turns); pod resume continues, or raise worker.max_turns`,
        );
        usageSoFar();
        return 1;
      }
      throw error;
    }
    live.finish();
    if (resuming && result.iterations === 0) {
      io.stderr.write(
        "pod: nothing to resume: the last turn finished (pod run <message> continues the conversation)\n",
      );
      return 0;
    }
    const calls = [
      ...turnCalls.map((m) => ({ usage: m.usage, costUsd: callCost(m.usage, price()) })),
      ...summaryCalls(),
    ];
    io.stderr.write(`pod: ${usageLine(usageTotals(calls))}\n`);
    return 0;
  } finally {
    interrupt.stop();
    try {
      await pod?.close();
    } finally {
      await mcp?.close(); // the servers' whole process trees
    }
  }
}

function fail(io: CliIo, style: Style, code: string, message: string): number {
  io.stderr.write(`pod: ${formatProblemLine({ code, message, severity: "error" }, style)}\n`);
  return 1;
}
