import { errorText } from "@insomnia/errors";
import type { ManifestProvider, PodManifest } from "@insomnia/manifest";
import { dirname } from "node:path";
import { SegmentStoreError } from "@insomnia/segment-store";
import type {
  PodWriterLock,
  SegmentRecord,
  SegmentSource,
  SegmentStartRecord,
  SegmentStore,
  SegmentWriter,
} from "@insomnia/segment-store";
import { WorkerError } from "@insomnia/worker";
import { createLoadSkillTool, LOAD_SKILL_TOOL } from "@insomnia/skills";
import type { LoadableSkill } from "@insomnia/skills";
import type { TemplateLoader } from "@insomnia/template";
import type {
  AssistantMessage,
  CallGuard,
  LlmCallOptions,
  LlmRequest,
  Message,
  ToolServer,
  TurnOptions,
  TurnResult,
  UserInput,
} from "@insomnia/worker";
import { PromptLoader, PromptLoaderError } from "@insomnia/prompt-loader";
import { DEFAULT_COMPACT_AT, DEFAULT_COMPACT_INSTRUCTION, manifestProvenance } from "@insomnia/manifest";
import { callCost, priceOf } from "./call-cost.ts";
import { messageHash, shortHash } from "./call-record.ts";
import type { CallMessageRecord, CallRecord } from "./call-record.ts";
import { systemClock } from "./clock.ts";
import type { Clock } from "./clock.ts";
import { buildScope, parsePodPrompt, renderPodPrompt, readSkillCatalog, skillSourceRef } from "./pod-prompt.ts";
import type { ParsedPodPrompt } from "./pod-prompt.ts";
import { PodError } from "./pod-error.ts";
import { makePodTools, type PodToolContext, type PodToolFactory } from "./pod-tools.ts";
import { silentNotifier } from "./pod-warning.ts";
import type { Notifier, PodWarning } from "./pod-warning.ts";
import { checkSources } from "./source-drift.ts";
import { summaryMessage } from "./summary-message.ts";
import {
  compactionRequest,
  estimateSegmentTokens,
  reachedThreshold,
  splitForCompaction,
  thresholdTokens,
  withoutOldToolOutputs,
} from "./compaction.ts";
import type { CompactionMark, CompactionReason, CompactionReport, CompactionSettings } from "./compaction.ts";
import { contextWindowOf } from "./context-window.ts";

/**
 * What a pod needs of its worker: an `@insomnia/worker` `Worker` (from any installed copy of
 * that package), or anything else with these members.
 */
export interface PodWorker {
  /** True while a run() or resume() is active or queued. */
  readonly busy: boolean;
  readonly tools: Pick<ToolServer, "flushPending" | "names" | "definitions" | "has" | "register">;
  addMessageListener(listener: (message: Message) => void | Promise<void>): () => void;
  setSystemPrompt(prompt: string): void;
  getSystemPrompt(): string | undefined;
  setHistory(messages: readonly Message[]): void;
  getHistory(): readonly Message[];
  run(input: string | UserInput, options?: TurnOptions): Promise<TurnResult>;
  resume(options?: TurnOptions): Promise<TurnResult>;
  /** Asked before each model call (automatic compaction); a worker without it never compacts on its own. */
  setCallGuard?(guard: CallGuard | undefined): void;
  /** One model call outside the history: the model-written summary; without it only `compact(summarize)` works. */
  callModel?(request: LlmRequest, options?: LlmCallOptions): Promise<AssistantMessage>;
}

/** What {@link Pod.fromManifest} needs besides the manifest. */
export interface PodDeps {
  /** The agent loop; the pod sets its system prompt and history. */
  worker: PodWorker;
  /** Where segment logs go. */
  store: SegmentStore;
  /** Reads prompt references; default `PromptLoader.forPod({ cwd: manifest.pod.pwd, env })`. */
  loader?: TemplateLoader | undefined;
  /** Time rendered into the prompt and stamped on segments (default: the wall clock). */
  clock?: Clock | undefined;
  /** Receives warnings (default: drops them). */
  notifier?: Notifier | undefined;
  /** Stamps each model call with the time it was sent (default: the wall clock); apart from `clock`, read once. */
  callClock?: Clock | undefined;
  /**
   * Where the host's `$user` prompt root and user skill roots come from (`XDG_CONFIG_HOME`,
   * `HOME`); default `process.env`. Pass `{}` for a hermetic pod: no `$user` root, no user skills.
   */
  env?: NodeJS.ProcessEnv | undefined;
  /** Makes the pod's tools from its scope (built once, here); registered on the worker before the prompt is rendered. */
  tools?: readonly PodToolFactory[] | undefined;
  /** Handed to the tool factories (`PodToolContext.signal`). */
  signal?: AbortSignal | undefined;
  /** Told of every compaction (automatic or not): what it did and what its summary call used. */
  onCompaction?: ((report: CompactionReport) => void) | undefined;
  /**
   * Trust the workspace layer of a manifest from `loadManifest` even if the user has not
   * (`pod trust`). Without it, a widening value from an untrusted workspace layer (a `pod.pwd`
   * or allow rule outside the workspace, a non-loopback `provider.base_url`, a key file outside
   * the workspace) is refused with the manifest's `UNTRUSTED_WORKSPACE` before anything is read.
   */
  trustWorkspace?: boolean | undefined;
}

/** What {@link Pod.restore} needs besides the store, segment and worker. */
export interface RestoreDeps {
  /**
   * When given, each recorded source is re-resolved through this loader (so a reference
   * that now points at another file counts as changed); otherwise the recorded files are re-hashed.
   */
  loader?: TemplateLoader | undefined;
  /** Stamps segments started by later compactions (default: the wall clock). */
  clock?: Clock | undefined;
  /** Receives warnings (default: drops them). */
  notifier?: Notifier | undefined;
  /** Stamps each model call with the time it was sent (default: the wall clock). */
  callClock?: Clock | undefined;
  /** The manifest's provider block: the kind, model and prices recorded with each model call. */
  provider?: Pick<ManifestProvider, "kind" | "model" | "pricing"> | undefined;
  /**
   * Called with the segment's start record before the worker's pending tool factories run, so
   * a factory can offer exactly the tools recorded there (`toolDefinitions`: MCP tools are
   * frozen for a pod's life and sent again byte for byte on restore).
   */
  onSegmentStart?: ((start: SegmentStartRecord) => void) | undefined;
  /** Makes the pod's tools, from the scope of `manifest` (required with `tools`); registered before the recorded tool list is compared. */
  tools?: readonly PodToolFactory[] | undefined;
  /**
   * The manifest the tools' scope is built from; also where the compaction settings come from
   * (`provider.context_window` or the shipped table, `worker.compact_at`, `worker.compact_instruction`,
   * read through `loader` or the pod's standard roots). Without it the pod never compacts on its own.
   */
  manifest?: PodManifest | undefined;
  /** Handed to the tool factories (`PodToolContext.signal`). */
  signal?: AbortSignal | undefined;
  /** Told of every compaction (automatic or not): what it did and what its summary call used. */
  onCompaction?: ((report: CompactionReport) => void) | undefined;
  /** Where `$user` prompts come from for the compaction instruction (default `process.env`). */
  env?: NodeJS.ProcessEnv | undefined;
}

/** What {@link Pod.open} needs: a new pod's deps, and what a restored one takes besides them. */
export interface OpenDeps extends PodDeps {
  /** Called with the restored segment's start record (see {@link RestoreDeps.onSegmentStart}). */
  onSegmentStart?: ((start: SegmentStartRecord) => void) | undefined;
}

/** Registers the tools the factories make on the worker. */
async function registerPodTools(
  worker: PodWorker,
  factories: readonly PodToolFactory[] | undefined,
  context: () => PodToolContext,
): Promise<void> {
  if (factories === undefined || factories.length === 0) return;
  for (const tool of await makePodTools(factories, context())) worker.tools.register(tool);
}

/**
 * A record of a pod's segment as `readSegment()` returns it: the start, or a worker message.
 * Records come back as JSON the store checked for framing and shape (`isSegmentRecord`); a
 * message's own fields are checked by the worker when a pod restores it (`setHistory`).
 */
export type PodSegmentRecord = SegmentRecord<Message>;

/** Turns a conversation history into the summary text a compacted segment starts from. */
export type Summarizer = (history: readonly Message[]) => Promise<string> | string;

// Marks a worker that an open pod logs; a Symbol.for key, so two installed copies of this
// package see each other's pods. Set on the worker itself: the attachment is its state.
const ATTACHED = Symbol.for("insomnia.pod.attachedWorker");

function isAttached(worker: PodWorker): boolean {
  return (worker as unknown as Record<symbol, unknown>)[ATTACHED] === true;
}

function setAttached(worker: PodWorker, attached: boolean): void {
  Object.defineProperty(worker, ATTACHED, { value: attached, configurable: true, writable: true, enumerable: false });
}

/** Refuses a worker another open pod already logs: its turns would go into both segments. */
function checkWorkerFree(worker: PodWorker, action: string): void {
  if (isAttached(worker)) {
    throw new PodError(
      "WORKER_IN_USE",
      `${action}: the worker belongs to another open pod, which logs each of its messages; ` +
        "close that pod first, or give this pod a worker of its own",
    );
  }
}

/** The worker's own BUSY error: a restore into a worker whose run() is in flight. */
function busyError(segmentId: string, cause?: unknown): WorkerError {
  return new WorkerError(
    "BUSY",
    `cannot restore segment ${segmentId} into this worker: its run() or resume() is still active or queued; ` +
      "await it first (the segment was not changed)",
    cause === undefined ? {} : { cause },
  );
}

/**
 * The shape of the messages this pod writes: 1 (absent on the record) is text-only messages;
 * 2 adds images, reasoning, `interrupted` and `turnId`. Every earlier version restores as is.
 */
export const MESSAGE_FORMAT_VERSION = 2;

/**
 * The version of a compaction's summary-call record (a message record with `compaction` set):
 * a reader that does not know it must refuse the segment rather than take the summary call for
 * part of the conversation. A restore leaves these records out of the history.
 */
export const COMPACTION_RECORD_VERSION = 3;

/**
 * Reads the compaction instruction. The default one is shipped with this package's prompt
 * loader, so a loader whose `$insomnia` root lacks it (a test's, an app's) gets the shipped file.
 */
async function loadCompactInstruction(loader: TemplateLoader, ref: string): Promise<{ text: string }> {
  try {
    return await loader.load(ref);
  } catch (error) {
    if (ref !== DEFAULT_COMPACT_INSTRUCTION || !PromptLoaderError.is(error) || error.code !== "NOT_FOUND") throw error;
    return new PromptLoader().load(ref);
  }
}

/** The compaction settings of `manifest`; reads `worker.compact_instruction` (INVALID_COMPACT_INSTRUCTION when it cannot). */
async function compactionSettings(manifest: PodManifest, loader: TemplateLoader): Promise<CompactionSettings> {
  const instructionRef = manifest.worker.compact_instruction ?? DEFAULT_COMPACT_INSTRUCTION;
  let instruction: string;
  try {
    instruction = (await loadCompactInstruction(loader, instructionRef)).text;
  } catch (cause) {
    const detail = cause instanceof Error ? ((cause as { detail?: string }).detail ?? cause.message) : String(cause);
    // At the manifest value when it has one (as `pod check` reports it), else at the file tried.
    const at = manifestProvenance(manifest)?.origins["worker.compact_instruction"];
    throw new PodError(
      "INVALID_COMPACT_INSTRUCTION",
      `worker.compact_instruction ${instructionRef} cannot be read: ${detail}; fix the reference or the file`,
      {
        cause,
        ref: instructionRef,
        ...(at === undefined
          ? { file: (cause as { file?: string }).file }
          : { file: at.file, line: at.line, column: at.column }),
      },
    );
  }
  return {
    window: contextWindowOf(manifest.provider),
    at: manifest.worker.compact_at ?? DEFAULT_COMPACT_AT,
    instructionRef,
    instruction,
  };
}

/** True for a compaction's summary-call record. */
function isCompactionRecord(record: unknown): boolean {
  return typeof record === "object" && record !== null && (record as { compaction?: unknown }).compaction !== undefined;
}

/** True when a failed model call is the provider saying the prompt is too long (`CONTEXT_OVERFLOW` anywhere in its causes). */
function isContextOverflow(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 8; depth += 1) {
    if ((cause as { code?: unknown }).code === "CONTEXT_OVERFLOW") return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A pod: a worker whose system prompt is rendered once, before its first turn, and then
 * kept byte for byte — across turns, compactions and restores — in a segment log.
 */
export class Pod {
  readonly #worker: PodWorker;
  readonly #store: SegmentStore;
  readonly #clock: Clock;
  readonly #notifier: Notifier;
  /** The parsed instruction; cleared by the first successful render so it can never render twice. */
  #prepared: ParsedPodPrompt | undefined;
  /** A rendered prompt whose segment could not be created yet (retried on the next turn). */
  #pendingStart: SegmentStartRecord | undefined;
  #writer: SegmentWriter | undefined;
  #sources: readonly SegmentSource[] = [];
  #systemPrompt: string | undefined;
  #tools: readonly string[] | undefined;
  #toolDefinitions: SegmentStartRecord["toolDefinitions"];
  #sections: SegmentStartRecord["sections"];
  #materializing: Promise<void> | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Messages appended to the current segment (after its segment_start). */
  #segmentMessages = 0;
  readonly #stopLogging: () => void;
  /** The provider recorded with each model call (kind, model, prices). */
  #provider: RestoreDeps["provider"];
  /** When the next model call is sent: the turn's start, or the last message logged before it. */
  #sendsAt: Date | undefined;
  #callClock: Clock = systemClock;
  /** How this pod compacts; undefined: never on its own (no manifest, or a worker without a call guard). */
  #compaction: CompactionSettings | undefined;
  /** Usage of the current segment's last model call (never a summary call): what the threshold is checked against. */
  #lastUsage: AssistantMessage["usage"];
  /** True once a compaction ran for the model call about to be sent: at most one per call. */
  #compactedForCall = false;
  #onCompaction: ((report: CompactionReport) => void) | undefined;
  /** The pod's writer lock taken by {@link Pod.open}, given back by close(). */
  #podLock: PodWriterLock | undefined;

  private constructor(worker: PodWorker, store: SegmentStore, clock: Clock, notifier: Notifier) {
    this.#worker = worker;
    this.#store = store;
    this.#clock = clock;
    this.#notifier = notifier;
    // Each message is appended (and fsynced) before it enters the worker's history, so a
    // crash mid-turn keeps everything the model and the tools already said.
    this.#stopLogging = worker.addMessageListener((message) => this.#log(message));
    setAttached(worker, true);
  }

  /**
   * Builds the scope, parses the instruction (all includes, all checks) and registers the
   * tools `deps.tools` make on the worker. Renders nothing, writes nothing to the store.
   */
  static async fromManifest(manifest: PodManifest, deps: PodDeps): Promise<Pod> {
    checkWorkerFree(deps.worker, "cannot create a pod");
    const prepared = await parsePodPrompt(manifest, {
      ...(deps.loader === undefined ? {} : { loader: deps.loader }),
      ...(deps.env === undefined ? {} : { env: deps.env }),
      ...(deps.trustWorkspace === undefined ? {} : { trustWorkspace: deps.trustWorkspace }),
    });
    // Read before the pod takes the worker, so a bad reference leaves the worker free.
    const compaction = await compactionSettings(
      manifest,
      deps.loader ?? PromptLoader.forPod({ cwd: manifest.pod.pwd, env: deps.env ?? process.env }),
    );
    await registerPodTools(deps.worker, deps.tools, () => ({
      scope: prepared.scope,
      pwd: prepared.cwd,
      ...(deps.signal === undefined ? {} : { signal: deps.signal }),
    }));
    const pod = new Pod(deps.worker, deps.store, deps.clock ?? systemClock, deps.notifier ?? silentNotifier);
    pod.#prepared = prepared;
    pod.#provider = manifest.provider;
    pod.#callClock = deps.callClock ?? systemClock;
    pod.#onCompaction = deps.onCompaction;
    pod.#useCompaction(compaction);
    return pod;
  }

  /**
   * The pod as its one writer: takes the pod's writer lock (`SEGMENT_LOCKED` when another
   * process or store instance holds it, with nothing written), then restores the latest
   * segment, or prepares the first one when there is none; the pod holds the lock until
   * close(). Deciding under the lock is what keeps two processes that open one pod at once
   * from both starting it (the second would fork the conversation): `fromManifest` and
   * `restore` alone leave that decision, and its lock, to the caller.
   */
  static async open(manifest: PodManifest, deps: OpenDeps): Promise<Pod> {
    const lock = await deps.store.lockPod();
    try {
      for (const warning of lock.warnings) (deps.notifier ?? silentNotifier).warn(warning);
      const latest = await deps.store.latestSegment();
      const pod =
        latest === undefined
          ? await Pod.fromManifest(manifest, deps)
          : await Pod.restore(deps.store, latest, deps.worker, { ...deps, manifest, provider: manifest.provider });
      pod.#podLock = lock;
      return pod;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /**
   * Re-opens a segment: the worker gets the stored prompt and the history (summary +
   * messages). Nothing is rendered and AGENTS.md is not read; changed sources only warn.
   */
  static async restore(
    store: SegmentStore,
    segmentId: string,
    worker: PodWorker,
    deps: RestoreDeps = {},
  ): Promise<Pod> {
    const notifier = deps.notifier ?? silentNotifier;
    // Checked before the segment is opened, so a refused restore leaves the store untouched.
    checkWorkerFree(worker, `cannot restore segment ${segmentId}`);
    if (worker.busy) throw busyError(segmentId);
    await registerPodTools(worker, deps.tools, () => {
      if (deps.manifest === undefined) {
        throw new PodError(
          "INVALID_ARGUMENT",
          "Pod.restore was given tools without the manifest their scope is built from",
        );
      }
      return {
        scope: buildScope(deps.manifest),
        pwd: deps.manifest.pod.pwd,
        ...(deps.signal === undefined ? {} : { signal: deps.signal }),
      };
    });
    const { records, writer, warnings } = await store.openSegment(segmentId);
    for (const warning of warnings) notifier.warn(warning);
    try {
      const [start, ...rest] = records;
      if (start?.type !== "segment_start") {
        throw new SegmentStoreError(
          "SEGMENT_CORRUPT",
          `segment ${segmentId} does not start with a segment_start record; the store broke its contract`,
        );
      }
      const conversation = rest.filter((record) => !isCompactionRecord(record));
      const messages = conversation.map((record, index) => {
        if (record.type !== "message") {
          throw new SegmentStoreError(
            "SEGMENT_CORRUPT",
            `segment ${segmentId}: record ${index + 2} is a second segment_start; the store broke its contract`,
          );
        }
        if ((record.version ?? 1) > MESSAGE_FORMAT_VERSION) {
          throw new PodError(
            "NEWER_LOG_FORMAT",
            `segment ${segmentId}: record ${index + 2} holds a message of format ${record.version}, newer than this version reads (${MESSAGE_FORMAT_VERSION}); upgrade @insomnia/pod (or the pod command) to continue this conversation`,
          );
        }
        return record.message as Message;
      });
      const history = start.summary === undefined ? messages : [summaryMessage(start.summary), ...messages];
      try {
        worker.setHistory(history); // validates every message before anything changes
      } catch (cause) {
        // A worker that became busy meanwhile says so itself; the segment is fine.
        if (WorkerError.is(cause) && cause.code === "BUSY") throw busyError(segmentId, cause);
        throw new SegmentStoreError(
          "SEGMENT_CORRUPT",
          `segment ${segmentId} holds a message the worker rejects: ${String(cause)}`,
          { cause },
        );
      }
      const warnings = await checkSources(start.sources, deps.loader);
      const compaction =
        deps.manifest === undefined
          ? undefined
          : await compactionSettings(
              deps.manifest,
              deps.loader ?? PromptLoader.forPod({ cwd: deps.manifest.pod.pwd, env: deps.env ?? process.env }),
            );
      worker.setSystemPrompt(start.systemPrompt);
      registerRecordedSkills(worker, start.sources);
      deps.onSegmentStart?.(start);
      await worker.tools.flushPending();
      const toolsChanged = toolsWarning(segmentId, start.tools, worker.tools.names());
      if (toolsChanged !== undefined) warnings.push(toolsChanged);
      const pod = new Pod(worker, store, deps.clock ?? systemClock, notifier);
      pod.#writer = writer;
      pod.#provider = deps.provider;
      pod.#callClock = deps.callClock ?? systemClock;
      pod.#adopt(start);
      pod.#segmentMessages = messages.length;
      pod.#lastUsage = messages.findLast((m) => m.role === "assistant")?.usage;
      pod.#onCompaction = deps.onCompaction;
      if (compaction !== undefined) pod.#useCompaction(compaction);
      for (const warning of warnings) notifier.warn(warning);
      return pod;
    } catch (error) {
      await writer.close();
      throw error;
    }
  }

  /** Id of the segment turns are appended to; undefined before the first turn. */
  get segmentId(): string | undefined {
    return this.#writer?.segmentId;
  }

  /** True once the system prompt was rendered and handed to the worker (or restored). */
  get isMaterialized(): boolean {
    return this.#prepared === undefined;
  }

  /** Files the current segment's prompt was built from; empty before materialization. */
  get sources(): readonly SegmentSource[] {
    return this.#sources;
  }

  /** The system prompt, byte for byte what the worker sends; undefined before materialization. */
  get systemPrompt(): string | undefined {
    return this.#systemPrompt;
  }

  /**
   * Where each section lies in {@link systemPrompt} (`{ start, end }` offsets, by section name),
   * as recorded with the prompt; undefined before materialization and for segments written
   * before sections were recorded.
   */
  get sections(): SegmentStartRecord["sections"] {
    return this.#sections;
  }

  /** The tool names the prompt was rendered with; undefined before materialization (or when not recorded). */
  get tools(): readonly string[] | undefined {
    return this.#tools;
  }

  /**
   * Materializes the system prompt now instead of on the first turn. Runs once: concurrent
   * and later calls share the first one's work.
   */
  materialize(): Promise<void> {
    if (this.#writer !== undefined) return Promise.resolve();
    this.#materializing ??= this.#materializeOnce().finally(() => {
      this.#materializing = undefined;
    });
    return this.#materializing;
  }

  /**
   * Runs one turn with a new user message (text, or text with images); the first call
   * materializes the prompt. `options` are per turn: `signal` stops it (the partial answer is
   * logged, marked interrupted), `onEvent` streams its events, `turnId` makes a retried call
   * return the stored turn (or continue an unfinished one) instead of sending it again.
   */
  run(input: string | UserInput, options: TurnOptions = {}): Promise<TurnResult> {
    return this.#enqueue(async () => {
      await this.materialize();
      this.#sendsAt = this.#callClock.now();
      return this.#worker.run(input, options);
    });
  }

  /**
   * Continues from the current history without a new user message; the first call
   * materializes the prompt. Right after a compaction (or the restore of a compacted segment
   * with nothing after its summary) there is nothing to continue: it resolves with no
   * messages and no model call, as on a finished turn.
   */
  resume(options: TurnOptions = {}): Promise<TurnResult> {
    return this.#enqueue(async () => {
      await this.materialize();
      // The summary is not a request: answering it would be a turn nobody asked for.
      if (this.#segmentMessages === 0) return { messages: [], final: "", iterations: 0 };
      this.#sendsAt = this.#callClock.now();
      return this.#worker.resume(options);
    });
  }

  /**
   * Compacts the conversation now and starts a new segment that carries the worker's current
   * system prompt and tools verbatim, then the summary (and, when a turn is unfinished, its user
   * message and last tool call with its results). Never re-renders, never reads AGENTS.md.
   * With `summarize`, the caller writes the summary and it is always applied; without it the
   * model writes it (`worker.compact_instruction`), from a request that reads the provider's
   * cache, and a summary that would not bring the conversation under the threshold is not
   * applied (`COMPACTION_INEFFECTIVE`, as is a failed one, `COMPACTION_FAILED`).
   */
  compact(summarize?: Summarizer): Promise<CompactionReport> {
    return this.#enqueue(async () => {
      if (this.#writer === undefined || this.#worker.getSystemPrompt() === undefined) {
        throw new PodError(
          "NOT_MATERIALIZED",
          "compact() before the first turn: there is nothing to compact yet; run a turn first",
        );
      }
      if (summarize !== undefined) return this.#compactWith(summarize);
      const { history, ...report } = await this.#compactByModel("manual", this.#currentRequest(), undefined);
      if (history !== undefined) this.#worker.setHistory(history);
      if (report.outcome !== "applied") {
        throw new PodError(
          report.outcome === "ineffective" ? "COMPACTION_INEFFECTIVE" : "COMPACTION_FAILED",
          report.message ?? "the compaction was not applied",
        );
      }
      return report;
    });
  }

  /** The caller's summarizer: its summary is applied as it is. */
  async #compactWith(summarize: Summarizer): Promise<CompactionReport> {
    const history = this.#worker.getHistory();
    const summary = await summarize(history);
    if (typeof summary !== "string") {
      throw new PodError("INVALID_ARGUMENT", `the summarizer must return a string, got ${typeof summary}`);
    }
    const { kept } = splitForCompaction(history);
    const previous = this.#writer!.segmentId;
    const next = await this.#startCompactedSegment(summary, kept);
    this.#worker.setHistory(next);
    const report: CompactionReport = {
      reason: "manual",
      outcome: "applied",
      instruction: "(the caller's summarizer)",
      segmentId: this.#writer!.segmentId,
      previousSegment: previous,
    };
    this.#onCompaction?.(report);
    return report;
  }

  /** What the next model call would send: the worker's prompt, history and tools. */
  #currentRequest(): LlmRequest {
    return {
      systemPrompt: this.#worker.getSystemPrompt() ?? "",
      messages: this.#worker.getHistory(),
      tools: this.#worker.tools.definitions(),
    };
  }

  /** Compacts on its own from now on, where the worker allows: checks before each model call. */
  #useCompaction(settings: CompactionSettings): void {
    this.#compaction = settings;
    this.#worker.setCallGuard?.((call) => this.#guard(call));
  }

  /**
   * The worker's call guard: before a call, compacts when the segment's last call reached the
   * threshold; after a call the provider refused as too long, compacts once so it is sent once more.
   */
  async #guard(call: Parameters<CallGuard>[0]): Promise<readonly Message[] | undefined> {
    const settings = this.#compaction;
    if (settings === undefined || this.#worker.callModel === undefined) return undefined;
    if (call.reason === "before-call") {
      this.#compactedForCall = false;
      if (!reachedThreshold(this.#lastUsage, settings)) return undefined;
      this.#compactedForCall = true;
      return (await this.#compactByModel("threshold", call.request, call.signal)).history;
    }
    if (!isContextOverflow(call.error)) return undefined;
    if (this.#compactedForCall) {
      throw new PodError(
        "CONTEXT_OVERFLOW",
        `the conversation no longer fits the model's context window (${errorText(call.error)}), and it was already compacted for this call; continue in a new conversation (pod run --new), lower worker.compact_at, or set provider.context_window to the model's real window`,
      );
    }
    this.#compactedForCall = true;
    const report = await this.#compactByModel("overflow", call.request, call.signal);
    if (report.history === undefined) {
      throw new PodError(
        "CONTEXT_OVERFLOW",
        `the conversation no longer fits the model's context window and could not be compacted (${report.message ?? report.outcome}); nothing was lost: continue in a new conversation (pod run --new), or use a model with a larger window`,
      );
    }
    return report.history;
  }

  /**
   * The model-written compaction: the previous request byte for byte plus what came since, then
   * the instruction; the summary call is logged in the segment it summarizes (its usage counts in
   * every total, never towards the threshold); an effective summary starts the next segment.
   */
  async #compactByModel(
    reason: CompactionReason,
    request: LlmRequest,
    signal: AbortSignal | undefined,
  ): Promise<CompactionReport & { history?: Message[] }> {
    const settings = this.#compaction;
    const callModel = this.#worker.callModel?.bind(this.#worker);
    if (settings === undefined || callModel === undefined) {
      throw new PodError(
        "INVALID_ARGUMENT",
        "compact() without a summarizer needs a pod created from a manifest (Pod.fromManifest, or Pod.restore with deps.manifest) and a worker with callModel(); pass your own summarizer otherwise",
      );
    }
    const { summarized, kept } = splitForCompaction(request.messages);
    const previous = this.#writer!.segmentId;
    const options = signal === undefined ? {} : { signal };
    const stopped = (): boolean => signal?.aborted === true;
    let sent = compactionRequest(request, summarized, settings.instruction);
    let leftOut = false;
    let answer: AssistantMessage;
    const sentAt = this.#callClock.now();
    try {
      answer = await callModel(sent, options);
    } catch (error) {
      if (stopped()) throw error; // stopped: the turn says so, not a failed compaction
      const lighter = isContextOverflow(error) ? withoutOldToolOutputs(summarized) : undefined;
      if (lighter === undefined) return this.#compactionFailed(reason, previous, settings, error);
      // Once: the oldest tool outputs give way to a visible placeholder (the log keeps them).
      sent = compactionRequest(request, lighter, settings.instruction);
      leftOut = true;
      try {
        answer = await callModel(sent, options);
      } catch (again) {
        if (stopped()) throw again;
        return this.#compactionFailed(reason, previous, settings, again, true);
      }
    }
    const summary = answer.content.trim();
    const threshold = thresholdTokens(settings);
    const estimated = estimateSegmentTokens(request, summary, kept);
    const mark: CompactionMark = {
      reason,
      instruction: settings.instructionRef,
      ...(leftOut ? { toolOutputsLeftOut: true } : {}),
      estimatedTokens: estimated,
      ...(threshold === undefined ? {} : { thresholdTokens: threshold }),
      outcome:
        summary === "" ? "failed" : threshold !== undefined && estimated >= threshold ? "ineffective" : "applied",
    };
    await this.#logSummaryCall(answer, sent, sentAt, mark);
    const report = {
      ...mark,
      segmentId: previous,
      previousSegment: previous,
      ...(answer.usage === undefined ? {} : { usage: answer.usage }),
    };
    if (mark.outcome === "failed") {
      const why =
        answer.toolCalls !== undefined
          ? "the model called a tool instead of writing the summary"
          : "the model answered with no summary";
      return this.#notApplied({ ...report, message: `${why}; the conversation goes on uncompacted` });
    }
    if (mark.outcome === "ineffective") {
      return this.#notApplied({
        ...report,
        message: `the summary would leave about ${estimated} tokens with the system prompt, tools and kept messages, not under the threshold of ${threshold} (worker.compact_at ${settings.at} of ${settings.window}); it was not applied and the conversation goes on uncompacted`,
      });
    }
    const history = await this.#startCompactedSegment(summary, kept);
    const applied = { ...report, segmentId: this.#writer!.segmentId };
    this.#onCompaction?.(applied);
    return { ...applied, history };
  }

  /** A compaction whose summary call failed: logged as a warning (nothing was written), reported. */
  #compactionFailed(
    reason: CompactionReason,
    previous: string,
    settings: CompactionSettings,
    error: unknown,
    leftOut = false,
  ): CompactionReport {
    const detail = error instanceof Error ? error.message : String(error);
    return this.#notApplied({
      reason,
      outcome: "failed",
      instruction: settings.instructionRef,
      ...(leftOut ? { toolOutputsLeftOut: true } : {}),
      segmentId: previous,
      previousSegment: previous,
      message: `the summary call failed${leftOut ? " even with the oldest tool outputs left out" : ""}: ${detail}`,
    });
  }

  #notApplied(report: CompactionReport): CompactionReport {
    this.#notifier.warn({
      code: report.outcome === "ineffective" ? "COMPACTION_INEFFECTIVE" : "COMPACTION_FAILED",
      message: `compaction (${report.reason}) of segment ${report.previousSegment} not applied: ${report.message}`,
    });
    this.#onCompaction?.(report);
    return report;
  }

  /** Appends the summary call to the segment it summarizes, marked so a restore leaves it out of the history. */
  async #logSummaryCall(answer: AssistantMessage, sent: LlmRequest, sentAt: Date, mark: CompactionMark): Promise<void> {
    const record: CallMessageRecord & { readonly compaction: CompactionMark } = {
      type: "message",
      version: COMPACTION_RECORD_VERSION,
      message: answer,
      call: this.#callRecord(answer, sent, sentAt),
      compaction: mark,
    };
    await this.#writer!.append(record);
  }

  /**
   * Starts the next segment: the same prompt, tool names and definitions, the summary, then the
   * kept messages appended as records. Returns the worker's new history. Closes the previous segment.
   */
  async #startCompactedSegment(summary: string, kept: readonly Message[]): Promise<Message[]> {
    const previous = this.#writer!;
    const next = await this.#store.createSegment({
      type: "segment_start",
      systemPrompt: this.#worker.getSystemPrompt()!,
      sources: this.#sources,
      createdAt: this.#clock.now().toISOString(),
      previousSegment: previous.segmentId,
      summary,
      ...(this.#tools === undefined ? {} : { tools: this.#tools }),
      ...(this.#toolDefinitions === undefined ? {} : { toolDefinitions: this.#toolDefinitions }),
      ...(this.#sections === undefined ? {} : { sections: this.#sections }),
    });
    this.#writer = next;
    this.#segmentMessages = 0;
    this.#lastUsage = undefined;
    await previous.close();
    for (const message of kept) {
      await next.append({ type: "message", version: MESSAGE_FORMAT_VERSION, message });
      this.#segmentMessages += 1;
    }
    return [summaryMessage(summary), ...kept];
  }

  /** Waits for queued work, then releases the segment (its lock). Idempotent; later turns fail with POD_CLOSED. */
  close(): Promise<void> {
    const done = this.#queue.then(async () => {
      if (this.#closed) return;
      this.#closed = true;
      this.#stopLogging();
      setAttached(this.#worker, false);
      try {
        await this.#writer?.close();
      } finally {
        await this.#podLock?.release();
      }
    });
    this.#queue = done.catch(() => undefined);
    return done;
  }

  /** Runs pod operations one after another, so a turn's log slice is its own. */
  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(() => {
      if (this.#closed) throw new PodError("POD_CLOSED", "the pod was closed; restore its segment to continue");
      return task();
    });
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #materializeOnce(): Promise<void> {
    let start = this.#pendingStart;
    if (start === undefined) {
      const prepared = this.#prepared;
      if (prepared === undefined) throw new PodError("NOT_MATERIALIZED", "the pod has no instruction to render");
      await this.#worker.tools.flushPending();
      // Skills are read once, here; load_skill is registered before the tool names are rendered.
      const skills = readSkillCatalog(prepared);
      registerLoadSkill(this.#worker, skills, (path) => prepared.scope.isReadable(path));
      const now = this.#clock.now();
      const rendered = await renderPodPrompt(prepared, {
        tools: this.#worker.tools.names(),
        now,
        notifier: this.#notifier,
        skills,
      });
      this.#worker.setSystemPrompt(rendered.prompt);
      this.#prepared = undefined;
      start = {
        type: "segment_start",
        systemPrompt: rendered.prompt,
        sources: rendered.sources.map(({ ref, file, sha256 }) => ({ ref, file, sha256 })),
        createdAt: now.toISOString(),
        tools: rendered.tools,
        // The definitions as the worker sends them, kept for the pod's life (restore sends them again).
        toolDefinitions: this.#worker.tools.definitions(),
        sections: { ...rendered.spans },
      };
      this.#pendingStart = start;
    }
    const started: SegmentStartRecord = start;
    this.#writer = await this.#store.createSegment(started);
    this.#adopt(started);
    this.#pendingStart = undefined;
  }

  /** Takes what a segment start records about the prompt. */
  #adopt(start: SegmentStartRecord): void {
    this.#sources = start.sources;
    this.#systemPrompt = start.systemPrompt;
    this.#tools = start.tools;
    this.#toolDefinitions = start.toolDefinitions;
    this.#sections = start.sections;
  }

  /** Appends one worker message to the current segment (the worker awaits it). */
  async #log(message: Message): Promise<void> {
    const writer = this.#writer;
    if (writer === undefined || this.#closed) {
      throw new PodError(
        "NOT_MATERIALIZED",
        "the worker ran outside a pod turn; drive it through pod.run() or pod.resume()",
      );
    }
    const record: CallMessageRecord =
      message.role === "assistant"
        ? { type: "message", version: MESSAGE_FORMAT_VERSION, message, call: this.#callRecord(message) }
        : { type: "message", version: MESSAGE_FORMAT_VERSION, message };
    await writer.append(record);
    this.#segmentMessages += 1;
    if (message.role === "assistant" && message.usage !== undefined) this.#lastUsage = message.usage;
    if (message.role !== "assistant") this.#sendsAt = this.#callClock.now();
  }

  /**
   * What the call that answered with `answer` sent: the history before it, the prompt, the tools
   * (or, for a summary call, the compaction request it was given).
   */
  #callRecord(answer: Message & { role: "assistant" }, sent?: LlmRequest, sentAt?: Date): CallRecord {
    const provider = this.#provider;
    const request = sent ?? this.#currentRequest();
    const costUsd = callCost(answer.usage, priceOf(provider?.model, provider?.pricing));
    return {
      sentAt: (sentAt ?? this.#sendsAt ?? this.#callClock.now()).toISOString(),
      ...(provider === undefined ? {} : { provider: provider.kind, model: provider.model }),
      system: shortHash(request.systemPrompt),
      tools: shortHash(JSON.stringify(request.tools)),
      messages: request.messages.map(messageHash),
      ...(costUsd === undefined ? {} : { costUsd }),
    };
  }
}

/** TOOLS_CHANGED when the restored prompt names other tools than the worker now offers. */
function toolsWarning(
  segmentId: string,
  recorded: readonly string[] | undefined,
  now: readonly string[],
): PodWarning | undefined {
  if (recorded === undefined) return undefined;
  const same = recorded.length === now.length && recorded.every((name, i) => name === now[i]);
  if (same) return undefined;
  const list = (names: readonly string[]) => (names.length === 0 ? "no tools" : names.join(", "));
  return {
    code: "TOOLS_CHANGED",
    message:
      `segment ${segmentId}: its prompt was rendered with ${list(recorded)}, but the worker now offers ${list(now)}; ` +
      "requests will offer other tools than the prompt lists — register the same tools, or start a new pod",
  };
}

/** Registers `load_skill` over the catalog when there are skills and the worker has no tool of that name. */
function registerLoadSkill(
  worker: PodWorker,
  catalog: { readonly skills: readonly LoadableSkill[] },
  isReadable?: (path: string) => boolean,
): void {
  if (catalog.skills.length === 0 || worker.tools.has(LOAD_SKILL_TOOL)) return;
  worker.tools.register(createLoadSkillTool(catalog, isReadable === undefined ? {} : { isReadable }));
}

/**
 * A restored pod reads no skill catalog: its `load_skill` serves the skills recorded in the
 * segment's sources, each file kept inside the directory that held it when it was recorded.
 */
function registerRecordedSkills(worker: PodWorker, sources: readonly SegmentSource[]): void {
  const prefix = skillSourceRef("");
  const skills = sources
    .filter((source) => source.ref.startsWith(prefix))
    .map((source) => ({
      name: source.ref.slice(prefix.length),
      file: source.file,
      rootDir: dirname(dirname(source.file)),
      root: "user" as const,
    }));
  registerLoadSkill(worker, { skills });
}
