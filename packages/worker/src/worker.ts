import { errorText } from "@insomnia/errors";
import { normalizeImages, normalizeReasoning } from "./content-parts.ts";
import type { ImagePart } from "./content-parts.ts";
import type { Context } from "@opentelemetry/api";
import type { CallGuard } from "./call-guard.ts";
import type { LlmCallOptions, LlmClient, LlmRequest, LlmResponse, LlmStreamEvent } from "./llm-client.ts";
import { assistantMessage, normalizeMessage, normalizeToolCalls, normalizeUsage } from "./message.ts";
import type { AssistantMessage, Message, ToolCall, ToolMessage, UserMessage } from "./message.ts";
import type { ResolvedTelemetry, TurnTrace, WorkerTelemetry } from "./telemetry.ts";
import { resolveTelemetry, startChat, startTool, startTurn, within } from "./telemetry.ts";
import { ToolServer, toolFailureOf } from "./tool-server.ts";
import type { TurnEvent, TurnOptions } from "./turn.ts";
import { CONTINUE_PROMPT, INTERRUPTED_RESULT } from "./turn.ts";
import { WorkerError } from "./worker-error.ts";

/** A user turn: its text, and images to go with it. */
export interface UserInput {
  readonly text: string;
  readonly images?: readonly ImagePart[] | undefined;
}

/** What one turn shares between its steps: the combined signal, and the first error an event listener threw. */
interface TurnContext {
  readonly signal: AbortSignal;
  readonly emit: (event: TurnEvent) => void;
  readonly listenerFailure: () => { error: unknown } | undefined;
}

/** Options of a Worker. */
export interface WorkerOptions {
  /** The model. */
  client: LlmClient;
  /** Most client calls in one run()/resume(); default 50. */
  maxIterations?: number | undefined;
  /**
   * Called with every message the worker appends (user, assistant, tool), in order, and
   * awaited before the message enters the history. If it throws, the message is not
   * appended and run()/resume() rejects with that same error.
   */
  onMessage?: ((message: Message) => void | Promise<void>) | undefined;
  /**
   * What the OpenTelemetry spans of each turn say (provider, model, agent, conversation) and
   * whether they carry message content. Spans go to the global tracer provider (a no-op until
   * an SDK is registered) unless `telemetry.tracerProvider` is given.
   */
  telemetry?: WorkerTelemetry | undefined;
}

/** What one run()/resume() produced. */
export interface TurnResult {
  /** The messages appended during this call, in order. */
  messages: Message[];
  /** The content of the last assistant message ("" when there is none). */
  final: string;
  /** How many times the client was called. */
  iterations: number;
}

/** The default of WorkerOptions.maxIterations. */
export const DEFAULT_MAX_ITERATIONS = 50;

/**
 * The agent loop: a finished system prompt string, tools, history and an LLM client.
 * run()/resume() calls are queued, so one never interleaves with another.
 */
export class Worker {
  /** The tools offered to the model. */
  readonly tools: ToolServer = new ToolServer();
  readonly #client: LlmClient;
  readonly #maxIterations: number;
  readonly #telemetry: ResolvedTelemetry;
  readonly #listeners: ((message: Message) => void | Promise<void>)[] = [];
  #systemPrompt: string | undefined;
  #history: Message[] = [];
  #queue: Promise<void> = Promise.resolve();
  #queued = 0;
  #guard: CallGuard | undefined;

  constructor(options: WorkerOptions) {
    if (typeof options?.client?.complete !== "function") {
      throw new WorkerError("INVALID_ARGUMENT", "Worker needs a client with a complete(request) method");
    }
    const max = options.maxIterations ?? DEFAULT_MAX_ITERATIONS;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new WorkerError("INVALID_ARGUMENT", `maxIterations must be a positive integer, got ${String(max)}`);
    }
    if (options.onMessage !== undefined && typeof options.onMessage !== "function") {
      throw new WorkerError("INVALID_ARGUMENT", "onMessage must be a function when given");
    }
    this.#client = options.client;
    this.#maxIterations = max;
    this.#telemetry = resolveTelemetry(options.telemetry);
    if (options.onMessage !== undefined) this.#listeners.push(options.onMessage);
  }

  /**
   * Adds a listener with the same contract as `onMessage` (awaited, in order, before the
   * message enters the history; a throw keeps the message out and fails the run). Listeners
   * run in the order they were added, `onMessage` first. Returns a function that removes it.
   */
  addMessageListener(listener: (message: Message) => void | Promise<void>): () => void {
    if (typeof listener !== "function") {
      throw new WorkerError("INVALID_ARGUMENT", "addMessageListener needs a function");
    }
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index !== -1) this.#listeners.splice(index, 1);
    };
  }

  /** Sets the system prompt sent, byte for byte, on every later client call. */
  setSystemPrompt(prompt: string): void {
    if (typeof prompt !== "string") {
      throw new WorkerError("INVALID_ARGUMENT", `the system prompt must be a string, got ${typeof prompt}`);
    }
    this.#systemPrompt = prompt;
  }

  /** The system prompt, or undefined before setSystemPrompt was called. */
  getSystemPrompt(): string | undefined {
    return this.#systemPrompt;
  }

  /** A frozen copy of the conversation history. */
  getHistory(): readonly Message[] {
    return Object.freeze([...this.#history]);
  }

  /** Replaces the history (e.g. on restore or compaction); BUSY while a run is active or queued. */
  setHistory(messages: readonly Message[]): void {
    if (this.#queued > 0) {
      throw new WorkerError(
        "BUSY",
        "cannot replace the history while run() or resume() is active or queued; await it first",
      );
    }
    this.#history = checkedHistory(messages);
  }

  /**
   * Sets (or with undefined removes) the guard asked before each model call and after a failed
   * one; it may replace the history mid-turn (a pod's automatic compaction). One guard at a time.
   */
  setCallGuard(guard: CallGuard | undefined): void {
    if (guard !== undefined && typeof guard !== "function") {
      throw new WorkerError("INVALID_ARGUMENT", "setCallGuard needs a function or undefined");
    }
    this.#guard = guard;
  }

  /**
   * One model call outside the history (a compaction's summary): nothing is appended, no
   * listener is called. The answer is checked like a turn's; a client failure is CLIENT_FAILED.
   */
  async callModel(request: LlmRequest, options: LlmCallOptions = {}): Promise<AssistantMessage> {
    // Its own `chat` span, under the active one (the turn whose guard asked for the summary).
    const chat = startChat(this.#telemetry, request);
    try {
      let response: unknown;
      try {
        // Always with a listener, as a turn's calls are: a client that streams only when asked
        // must send this request the same way, byte for byte, or it cannot read their cache.
        response = await within(chat.context, () =>
          this.#client.complete(request, { ...options, onEvent: options.onEvent ?? (() => undefined) }),
        );
      } catch (cause) {
        throw new WorkerError("CLIENT_FAILED", `the LLM client failed: ${errorText(cause)}`, { cause });
      }
      const answer = readResponse(response);
      if (typeof answer === "string") {
        throw new WorkerError(
          "CLIENT_FAILED",
          `the LLM client returned an invalid response: ${answer}; fix the client adapter`,
        );
      }
      chat.succeed({ content: answer.content, toolCalls: answer.toolCalls, usage: answer.usage, ...metaOf(response) });
      return answer;
    } catch (error) {
      chat.fail(error);
      throw error;
    }
  }

  /** True while a run()/resume() is active or queued. */
  get busy(): boolean {
    return this.#queued > 0;
  }

  /**
   * Appends a user message and loops client -> tools until the model answers without tool
   * calls. `options.signal` stops the turn (partial text kept, marked `interrupted`; rejects
   * with `ABORTED`), `options.onEvent` gets the turn's events as they happen, and
   * `options.turnId` makes a retried call idempotent: a finished turn with that id is returned
   * as stored, an unfinished one continued, and its message is never sent twice.
   */
  run(input: string | UserInput, options: TurnOptions = {}): Promise<TurnResult> {
    const user = userMessage(input, options.turnId);
    if (typeof user === "string") return Promise.reject(new WorkerError("INVALID_ARGUMENT", user));
    return this.#enqueue(() => this.#turn(user, options));
  }

  /**
   * Continues from the current history (e.g. after restore) without a new user message.
   * Resolves with an empty result when the history is empty or ends with a final answer; after
   * an interrupted answer it asks the model to go on from where it stopped.
   */
  resume(options: TurnOptions = {}): Promise<TurnResult> {
    return this.#enqueue(() => this.#turn(undefined, options));
  }

  #enqueue(task: () => Promise<TurnResult>): Promise<TurnResult> {
    this.#queued += 1;
    const result = this.#queue.then(task).finally(() => {
      this.#queued -= 1;
    });
    this.#queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** One turn inside its `invoke_agent` span. */
  async #turn(user: UserMessage | undefined, options: TurnOptions): Promise<TurnResult> {
    const trace = startTurn(this.#telemetry);
    try {
      // Spans started by code the turn calls (a message listener, a call guard) nest under it.
      const result = await within(trace.context, () => this.#turnSteps(user, options, trace));
      trace.end();
      return result;
    } catch (error) {
      trace.end(error);
      throw error;
    }
  }

  async #turnSteps(user: UserMessage | undefined, options: TurnOptions, trace: TurnTrace): Promise<TurnResult> {
    if (this.#systemPrompt === undefined) {
      throw new WorkerError(
        "NO_SYSTEM_PROMPT",
        "no system prompt is set; call setSystemPrompt(prompt) before run() or resume()",
      );
    }
    const context = turnContext(options);
    if (user?.turnId !== undefined) {
      const stored = this.#storedTurn(user.turnId);
      if (stored?.finished === true) return stored.result;
      if (stored !== undefined) user = undefined; // unfinished and last: continue it
    }
    throwIfAborted(context);
    await this.tools.flushPending();
    const appended: Message[] = [];
    await this.#answerPendingToolCalls(appended, context, trace);
    if (user !== undefined) {
      await this.#append(user, appended);
    } else {
      const last = this.#history.at(-1);
      if (last === undefined || (last.role === "assistant" && last.toolCalls === undefined && !last.interrupted)) {
        return { messages: appended, final: last?.content ?? "", iterations: 0 };
      }
      if (last.role === "assistant" && last.toolCalls === undefined) {
        await this.#append(Object.freeze({ role: "user", content: CONTINUE_PROMPT }), appended);
      }
    }
    let iterations = 0;
    for (;;) {
      if (iterations >= this.#maxIterations) {
        throw new WorkerError(
          "MAX_ITERATIONS",
          `the model still requested tools after ${iterations} client calls (maxIterations ${this.#maxIterations}); ` +
            "the history ends with the tool results, so resume() continues, or raise maxIterations",
        );
      }
      iterations += 1;
      context.emit({ type: "model-call", iteration: iterations });
      await this.#askGuard("before-call", context);
      let assistant: AssistantMessage;
      try {
        assistant = await this.#complete(context, appended, trace);
      } catch (error) {
        // One more try, only when the guard replaced the history (e.g. compacted a prompt too long).
        if (context.signal.aborted || !(await this.#askGuard("call-failed", context, error))) throw error;
        assistant = await this.#complete(context, appended, trace);
      }
      await this.#append(assistant, appended);
      if (assistant.usage !== undefined) context.emit({ type: "usage", usage: assistant.usage });
      if (assistant.toolCalls === undefined) {
        throwIfAborted(context);
        return { messages: appended, final: assistant.content, iterations };
      }
      await this.#runToolCalls(assistant.toolCalls, appended, context, trace);
      throwIfAborted(context);
    }
  }

  /** Asks the guard (when set) about the next call; true when it replaced the history. */
  async #askGuard(reason: "before-call" | "call-failed", context: TurnContext, error?: unknown): Promise<boolean> {
    const guard = this.#guard;
    if (guard === undefined) return false;
    const request: LlmRequest = {
      systemPrompt: this.#systemPrompt!,
      messages: Object.freeze([...this.#history]),
      tools: Object.freeze(this.tools.definitions()),
    };
    const next = await guard({ reason, request, signal: context.signal, ...(error === undefined ? {} : { error }) });
    throwIfAborted(context);
    if (next === undefined) return false;
    this.#history = checkedHistory(next);
    return true;
  }

  /**
   * The turn opened by the user message with this id: finished when it ends with a final
   * answer or is followed by another user message; otherwise (the last turn, cut short) it is
   * continued. Undefined when no message has this id.
   */
  #storedTurn(turnId: string): { finished: boolean; result: TurnResult } | undefined {
    const start = this.#history.findIndex((m) => m.role === "user" && m.turnId === turnId);
    if (start === -1) return undefined;
    let end = start + 1;
    while (end < this.#history.length && this.#history[end]!.role !== "user") end += 1;
    const messages = this.#history.slice(start, end);
    const last = messages.at(-1)!;
    const answered = last.role === "assistant" && last.toolCalls === undefined && !last.interrupted;
    const finalAnswer = [...messages].reverse().find((m) => m.role === "assistant");
    return {
      finished: answered || end < this.#history.length,
      result: { messages, final: finalAnswer?.content ?? "", iterations: 0 },
    };
  }

  /**
   * One client call with the current system prompt, history and tools; streams its events and
   * validates the answer. When the turn is aborted, the text that had arrived is appended as an
   * interrupted assistant message and the call rejects with ABORTED.
   */
  async #complete(context: TurnContext, appended: Message[], trace: TurnTrace): Promise<AssistantMessage> {
    const request: LlmRequest = {
      systemPrompt: this.#systemPrompt!,
      messages: Object.freeze([...this.#history]),
      tools: Object.freeze(this.tools.definitions()),
    };
    const chat = startChat(this.#telemetry, request, trace);
    try {
      const { message, meta } = await this.#completeCall(request, context, appended, chat.context);
      trace.addUsage(message.usage);
      chat.succeed({ content: message.content, toolCalls: message.toolCalls, usage: message.usage, ...meta });
      return message;
    } catch (error) {
      chat.fail(error);
      throw error;
    }
  }

  async #completeCall(
    request: LlmRequest,
    context: TurnContext,
    appended: Message[],
    chatContext: Context,
  ): Promise<{ message: AssistantMessage; meta: ResponseMeta }> {
    let streamed = "";
    let deltas = 0;
    const onEvent = (event: LlmStreamEvent): void => {
      if (context.signal.aborted) return;
      if (event.type === "text-delta") {
        if (typeof event.text !== "string" || event.text === "") return;
        streamed += event.text;
        deltas += 1;
        context.emit({ type: "text-delta", text: event.text });
      } else if (event.type === "reasoning-delta") {
        if (typeof event.text === "string" && event.text !== "")
          context.emit({ type: "reasoning-delta", text: event.text });
      } else if (event.type === "retry") {
        context.emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, code: event.code });
      }
    };
    let response: unknown;
    try {
      response = await within(chatContext, () => this.#client.complete(request, { signal: context.signal, onEvent }));
    } catch (cause) {
      if (context.signal.aborted) {
        if (streamed !== "") {
          await this.#append(assistantMessage(streamed, undefined, undefined, { interrupted: true }), appended);
        }
        throw abortError(context, cause);
      }
      throw new WorkerError("CLIENT_FAILED", `the LLM client failed: ${errorText(cause)}; resume() retries`, { cause });
    }
    const invalid = (problem: string): WorkerError =>
      new WorkerError(
        "CLIENT_FAILED",
        `the LLM client returned an invalid response: ${problem}; fix the client adapter`,
      );
    if (typeof response !== "object" || response === null) throw invalid("expected an object");
    try {
      const { content, toolCalls, usage, reasoning } = response as Record<string, unknown>;
      if (typeof content !== "string") throw invalid(`content must be a string, got ${typeof content}`);
      if (deltas > 0 && content !== streamed) throw invalid("its text deltas do not join to its content");
      const calls = normalizeToolCalls(toolCalls);
      if (typeof calls === "string") throw invalid(calls);
      const counted = normalizeUsage(usage);
      if (typeof counted === "string") throw invalid(counted);
      const thought = normalizeReasoning(reasoning);
      if (typeof thought === "string") throw invalid(thought);
      // A client that only completes: its whole text is the one delta.
      if (deltas === 0 && content !== "") context.emit({ type: "text-delta", text: content });
      // Only telemetry reads these: a client that gives none (or no strings) still works.
      const meta = metaOf(response);
      return { message: assistantMessage(content, calls, counted, { reasoning: thought }), meta };
    } catch (cause) {
      if (WorkerError.is(cause)) throw cause;
      // Reading the response threw (a hostile getter or proxy): still the client's fault.
      throw new WorkerError(
        "CLIENT_FAILED",
        `the LLM client returned an unreadable response: ${errorText(cause)}; fix the client adapter`,
        {
          cause,
        },
      );
    }
  }

  /**
   * Runs tool calls one after another, appending each result as it arrives. Once the turn is
   * aborted, a call that failed and every call not yet run gets an `isError` "interrupted"
   * result, so each call keeps its result.
   */
  async #runToolCalls(
    calls: readonly ToolCall[],
    appended: Message[],
    context: TurnContext,
    trace: TurnTrace,
  ): Promise<void> {
    for (const call of calls) {
      let result: ToolMessage;
      if (context.signal.aborted) {
        result = interruptedResult(call);
      } else {
        context.emit({ type: "tool-call", id: call.id, name: call.name, input: call.input });
        const span = startTool(
          this.#telemetry,
          call,
          () => this.tools.definitions().find((d) => d.name === call.name)?.description,
          trace,
        );
        result = await within(span.context, () => this.tools.call(call, { signal: context.signal }));
        if (context.signal.aborted && result.isError === true) result = interruptedResult(call);
        span.end(result, result.isError === true ? (toolFailureOf(result) ?? abortedTool(context)) : undefined);
      }
      await this.#append(result, appended);
      context.emit({ type: "tool-result", id: call.id, name: call.name, isError: result.isError === true });
    }
  }

  /**
   * When the history ends with an assistant message whose tool calls were not all
   * answered (an interrupted turn), runs the missing ones so the history is valid again.
   */
  async #answerPendingToolCalls(appended: Message[], context: TurnContext, trace: TurnTrace): Promise<void> {
    let index = this.#history.length - 1;
    while (index >= 0 && this.#history[index]!.role === "tool") index -= 1;
    const assistant = this.#history[index];
    if (assistant?.role !== "assistant" || assistant.toolCalls === undefined) return;
    const answered = new Set(this.#history.slice(index + 1).map((m) => (m.role === "tool" ? m.toolCallId : "")));
    await this.#runToolCalls(
      assistant.toolCalls.filter((call) => !answered.has(call.id)),
      appended,
      context,
      trace,
    );
  }

  async #append(message: Message, appended: Message[]): Promise<void> {
    const frozen = Object.isFrozen(message) ? message : Object.freeze(message);
    for (const listener of [...this.#listeners]) await listener(frozen);
    this.#history.push(frozen);
    appended.push(frozen);
  }
}

/** What the model answered besides its message, for the model call's span. */
type ResponseMeta = Pick<LlmResponse, "model" | "responseId" | "finishReason">;

/** The telemetry-only fields of a checked response (strings only; anything else is left out). */
function metaOf(response: unknown): ResponseMeta {
  const { model, responseId, finishReason } = response as Record<string, unknown>;
  return {
    ...(typeof model === "string" ? { model } : {}),
    ...(typeof responseId === "string" ? { responseId } : {}),
    ...(typeof finishReason === "string" ? { finishReason } : {}),
  };
}

/** The error a tool span reports when the turn was aborted under the tool (else the tool's own failure). */
function abortedTool(context: TurnContext): unknown {
  return context.signal.aborted ? abortError(context, context.signal.reason) : undefined;
}

function interruptedResult(call: ToolCall): ToolMessage {
  return Object.freeze({
    role: "tool",
    toolCallId: call.id,
    name: call.name,
    content: INTERRUPTED_RESULT,
    isError: true,
  });
}

/** The user message of a run(): checked text and images, and the turn id when given. */
function userMessage(input: string | UserInput, turnId: string | undefined): UserMessage | string {
  if (turnId !== undefined && (typeof turnId !== "string" || turnId === "")) {
    return `turnId must be a non-empty string when given, got ${typeof turnId}`;
  }
  const withId = turnId === undefined ? {} : { turnId };
  if (typeof input === "string") return Object.freeze({ role: "user", content: input, ...withId });
  if (typeof input !== "object" || input === null || typeof input.text !== "string") {
    return `run() needs a string or { text, images? } input, got ${input === null ? "null" : typeof input}`;
  }
  const images = normalizeImages(input.images, "images");
  if (typeof images === "string") return images;
  return Object.freeze({
    role: "user",
    content: input.text,
    ...(images === undefined ? {} : { images }),
    ...withId,
  });
}

/** The signal a turn runs under (the caller's, plus one that a throwing event listener aborts) and its emitter. */
function turnContext(options: TurnOptions): TurnContext {
  const { signal, onEvent } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new WorkerError("INVALID_ARGUMENT", "signal must be an AbortSignal when given");
  }
  if (onEvent !== undefined && typeof onEvent !== "function") {
    throw new WorkerError("INVALID_ARGUMENT", "onEvent must be a function when given");
  }
  const own = new AbortController();
  let failure: { error: unknown } | undefined;
  return {
    signal: signal === undefined ? own.signal : AbortSignal.any([signal, own.signal]),
    emit: (event) => {
      if (onEvent === undefined || failure !== undefined) return;
      try {
        onEvent(event);
      } catch (error) {
        failure = { error };
        own.abort(error);
      }
    },
    listenerFailure: () => failure,
  };
}

/** Rejects a turn whose signal fired: the listener's own error when an event listener threw, else ABORTED. */
function throwIfAborted(context: TurnContext): void {
  if (context.signal.aborted) throw abortError(context, context.signal.reason);
}

function abortError(context: TurnContext, cause: unknown): unknown {
  const failed = context.listenerFailure();
  if (failed !== undefined) return failed.error;
  return new WorkerError(
    "ABORTED",
    "the turn was stopped; the text that had arrived is kept in the history (marked interrupted), so run() or resume() continues from it",
    { cause: context.signal.reason ?? cause },
  );
}

/** The messages of a setHistory() (or a guard's new history), each checked and frozen. */
function checkedHistory(messages: readonly Message[]): Message[] {
  if (!Array.isArray(messages)) {
    throw new WorkerError("INVALID_ARGUMENT", "setHistory needs an array of messages");
  }
  const next: Message[] = [];
  for (const [i, value] of messages.entries()) {
    let message: ReturnType<typeof normalizeMessage>;
    try {
      message = normalizeMessage(value);
    } catch (cause) {
      throw new WorkerError("INVALID_ARGUMENT", `setHistory: message ${i} cannot be read: ${errorText(cause)}`, {
        cause,
      });
    }
    if (typeof message === "string") {
      throw new WorkerError("INVALID_ARGUMENT", `setHistory: message ${i}: ${message}`);
    }
    next.push(message);
  }
  return next;
}

/** A model's answer checked field by field: the assistant message, or what is wrong with it. */
function readResponse(response: unknown): AssistantMessage | string {
  if (typeof response !== "object" || response === null) return "expected an object";
  try {
    const { content, toolCalls, usage, reasoning } = response as Record<string, unknown>;
    if (typeof content !== "string") return `content must be a string, got ${typeof content}`;
    const calls = normalizeToolCalls(toolCalls);
    if (typeof calls === "string") return calls;
    const counted = normalizeUsage(usage);
    if (typeof counted === "string") return counted;
    const thought = normalizeReasoning(reasoning);
    if (typeof thought === "string") return thought;
    return assistantMessage(content, calls, counted, { reasoning: thought });
  } catch (cause) {
    return `it could not be read: ${errorText(cause)}`;
  }
}
