import type { ManifestProvider, PodManifest } from "@insomnia/manifest";
import { dirname } from "node:path";
import { SegmentStoreError } from "@insomnia/segment-store";
import type {
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
import type { Message, ToolServer, TurnOptions, TurnResult, UserInput } from "@insomnia/worker";
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
  /** The manifest the tools' scope is built from. */
  manifest?: PodManifest | undefined;
  /** Handed to the tool factories (`PodToolContext.signal`). */
  signal?: AbortSignal | undefined;
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
    await registerPodTools(deps.worker, deps.tools, () => ({
      scope: prepared.scope,
      pwd: prepared.cwd,
      ...(deps.signal === undefined ? {} : { signal: deps.signal }),
    }));
    const pod = new Pod(deps.worker, deps.store, deps.clock ?? systemClock, deps.notifier ?? silentNotifier);
    pod.#prepared = prepared;
    pod.#provider = manifest.provider;
    pod.#callClock = deps.callClock ?? systemClock;
    return pod;
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
      const messages = rest.map((record, index) => {
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
   * Replaces the history by one summary message and starts a new segment that carries
   * the worker's current system prompt verbatim. Never re-renders, never reads AGENTS.md.
   */
  compact(summarize: Summarizer): Promise<void> {
    return this.#enqueue(async () => {
      const previous = this.#writer;
      const systemPrompt = this.#worker.getSystemPrompt();
      if (previous === undefined || systemPrompt === undefined) {
        throw new PodError(
          "NOT_MATERIALIZED",
          "compact() before the first turn: there is nothing to compact yet; run a turn first",
        );
      }
      const summary = await summarize(this.#worker.getHistory());
      if (typeof summary !== "string") {
        throw new PodError("INVALID_ARGUMENT", `the summarizer must return a string, got ${typeof summary}`);
      }
      const next = await this.#store.createSegment({
        type: "segment_start",
        systemPrompt,
        sources: this.#sources,
        createdAt: this.#clock.now().toISOString(),
        previousSegment: previous.segmentId,
        summary,
        ...(this.#tools === undefined ? {} : { tools: this.#tools }),
        ...(this.#toolDefinitions === undefined ? {} : { toolDefinitions: this.#toolDefinitions }),
        ...(this.#sections === undefined ? {} : { sections: this.#sections }),
      });
      this.#worker.setHistory([summaryMessage(summary)]);
      this.#writer = next;
      this.#segmentMessages = 0;
      await previous.close();
    });
  }

  /** Waits for queued work, then releases the segment (its lock). Idempotent; later turns fail with POD_CLOSED. */
  close(): Promise<void> {
    const done = this.#queue.then(async () => {
      if (this.#closed) return;
      this.#closed = true;
      this.#stopLogging();
      setAttached(this.#worker, false);
      await this.#writer?.close();
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
    if (message.role !== "assistant") this.#sendsAt = this.#callClock.now();
  }

  /** What the call that answered with `answer` sent: the history before it, the prompt, the tools. */
  #callRecord(answer: Message & { role: "assistant" }): CallRecord {
    const provider = this.#provider;
    const tools = this.#worker.tools.definitions();
    const costUsd = callCost(answer.usage, priceOf(provider?.model, provider?.pricing));
    return {
      sentAt: (this.#sendsAt ?? this.#callClock.now()).toISOString(),
      ...(provider === undefined ? {} : { provider: provider.kind, model: provider.model }),
      system: shortHash(this.#worker.getSystemPrompt() ?? ""),
      tools: shortHash(JSON.stringify(tools)),
      messages: this.#worker.getHistory().map(messageHash),
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
