import { errorText } from "@insomnia/errors";
import type { LlmClient, LlmRequest } from "./llm-client.ts";
import { assistantMessage, normalizeMessage, normalizeToolCalls, normalizeUsage } from "./message.ts";
import type { AssistantMessage, Message, ToolCall } from "./message.ts";
import { ToolServer } from "./tool-server.ts";
import { WorkerError } from "./worker-error.ts";

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
  readonly tools = new ToolServer();
  readonly #client: LlmClient;
  readonly #maxIterations: number;
  readonly #listeners: ((message: Message) => void | Promise<void>)[] = [];
  #systemPrompt: string | undefined;
  #history: Message[] = [];
  #queue: Promise<void> = Promise.resolve();
  #queued = 0;

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
    this.#history = next;
  }

  /** True while a run()/resume() is active or queued. */
  get busy(): boolean {
    return this.#queued > 0;
  }

  /** Appends a user message and loops client -> tools until the model answers without tool calls. */
  run(input: string): Promise<TurnResult> {
    if (typeof input !== "string") {
      return Promise.reject(new WorkerError("INVALID_ARGUMENT", `run() needs a string input, got ${typeof input}`));
    }
    return this.#enqueue(() => this.#turn(input));
  }

  /**
   * Continues from the current history (e.g. after restore) without a new user message.
   * Resolves with an empty result when the history is empty or ends with a final answer.
   */
  resume(): Promise<TurnResult> {
    return this.#enqueue(() => this.#turn(undefined));
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

  async #turn(input: string | undefined): Promise<TurnResult> {
    if (this.#systemPrompt === undefined) {
      throw new WorkerError(
        "NO_SYSTEM_PROMPT",
        "no system prompt is set; call setSystemPrompt(prompt) before run() or resume()",
      );
    }
    await this.tools.flushPending();
    const appended: Message[] = [];
    await this.#answerPendingToolCalls(appended);
    if (input !== undefined) {
      await this.#append({ role: "user", content: input }, appended);
    } else {
      const last = this.#history.at(-1);
      if (last === undefined || (last.role === "assistant" && last.toolCalls === undefined)) {
        return { messages: appended, final: last?.content ?? "", iterations: 0 };
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
      const assistant = await this.#complete();
      await this.#append(assistant, appended);
      if (assistant.toolCalls === undefined) return { messages: appended, final: assistant.content, iterations };
      await this.#runToolCalls(assistant.toolCalls, appended);
    }
  }

  /** One client call with the current system prompt, history and tools; validates the answer. */
  async #complete(): Promise<AssistantMessage> {
    const request: LlmRequest = {
      systemPrompt: this.#systemPrompt!,
      messages: Object.freeze([...this.#history]),
      tools: Object.freeze(this.tools.definitions()),
    };
    let response: unknown;
    try {
      response = await this.#client.complete(request);
    } catch (cause) {
      throw new WorkerError("CLIENT_FAILED", `the LLM client failed: ${errorText(cause)}; resume() retries`, { cause });
    }
    const invalid = (problem: string): WorkerError =>
      new WorkerError(
        "CLIENT_FAILED",
        `the LLM client returned an invalid response: ${problem}; fix the client adapter`,
      );
    if (typeof response !== "object" || response === null) throw invalid("expected an object");
    try {
      const { content, toolCalls, usage } = response as Record<string, unknown>;
      if (typeof content !== "string") throw invalid(`content must be a string, got ${typeof content}`);
      const calls = normalizeToolCalls(toolCalls);
      if (typeof calls === "string") throw invalid(calls);
      const counted = normalizeUsage(usage);
      if (typeof counted === "string") throw invalid(counted);
      return assistantMessage(content, calls, counted);
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

  /** Runs tool calls one after another, appending each result as it arrives. */
  async #runToolCalls(calls: readonly ToolCall[], appended: Message[]): Promise<void> {
    for (const call of calls) await this.#append(await this.tools.call(call), appended);
  }

  /**
   * When the history ends with an assistant message whose tool calls were not all
   * answered (an interrupted turn), runs the missing ones so the history is valid again.
   */
  async #answerPendingToolCalls(appended: Message[]): Promise<void> {
    let index = this.#history.length - 1;
    while (index >= 0 && this.#history[index]!.role === "tool") index -= 1;
    const assistant = this.#history[index];
    if (assistant?.role !== "assistant" || assistant.toolCalls === undefined) return;
    const answered = new Set(this.#history.slice(index + 1).map((m) => (m.role === "tool" ? m.toolCallId : "")));
    await this.#runToolCalls(
      assistant.toolCalls.filter((call) => !answered.has(call.id)),
      appended,
    );
  }

  async #append(message: Message, appended: Message[]): Promise<void> {
    const frozen = Object.isFrozen(message) ? message : Object.freeze(message);
    for (const listener of [...this.#listeners]) await listener(frozen);
    this.#history.push(frozen);
    appended.push(frozen);
  }
}
