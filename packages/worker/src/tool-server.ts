import { deepFreeze } from "./deep-freeze.ts";
import { errorText } from "@insomnia/errors";
import type { ToolCall, ToolMessage } from "./message.ts";
import { normalizeImages } from "./content-parts.ts";
import type { Tool, ToolDefinition, ToolExecuteOptions, ToolFactory, ToolOutput } from "./tool.ts";
import { WorkerError } from "./worker-error.ts";

interface Registered {
  readonly tool: Tool;
  readonly definition: ToolDefinition;
}

interface Pending {
  /** 1-based registration number among factories, for messages. */
  readonly number: number;
  readonly factory: ToolFactory;
}

/** The error behind each failed tool message, so a trace can name its code; the message itself stays plain data. */
const toolFailures = new WeakMap<ToolMessage, unknown>();

function failed(message: ToolMessage, error: unknown): ToolMessage {
  toolFailures.set(message, error);
  return message;
}

/** What a failed tool call threw (or the UNKNOWN_TOOL error); undefined when it did not throw. */
export function toolFailureOf(message: ToolMessage): unknown {
  return toolFailures.get(message);
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Why a value is not a usable tool, or undefined when it is one. */
function toolProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "a tool must be an object";
  const tool = value as Partial<Record<keyof Tool, unknown>>;
  if (typeof tool.name !== "string" || tool.name === "") return "a tool needs a non-empty string name";
  if (typeof tool.description !== "string") return `tool "${tool.name}" needs a string description`;
  if (typeof tool.inputSchema !== "object" || tool.inputSchema === null || Array.isArray(tool.inputSchema)) {
    return `tool "${tool.name}" needs an object inputSchema`;
  }
  if (typeof tool.execute !== "function") return `tool "${tool.name}" needs an execute function`;
  return undefined;
}

/**
 * The worker's tools: registered directly or as lazy factories, materialized by
 * flushPending(), called by name.
 */
export class ToolServer {
  readonly #tools = new Map<string, Registered>();
  #pending: Pending[] = [];
  #factoryCount = 0;
  readonly #inFlight = new Set<Promise<WorkerError[]>>();

  /** Registers a ready tool; throws DUPLICATE_TOOL if its name is taken. */
  register(tool: Tool): void {
    const problem = toolProblem(tool);
    if (problem !== undefined) throw new WorkerError("INVALID_ARGUMENT", `cannot register tool: ${problem}`);
    const duplicate = this.#add(tool);
    if (duplicate !== undefined) throw duplicate;
  }

  /** Registers a factory that builds a tool later, on the next flushPending(). */
  registerFactory(factory: ToolFactory): void {
    if (typeof factory !== "function") {
      throw new WorkerError("INVALID_ARGUMENT", "cannot register tool factory: it must be a function");
    }
    this.#factoryCount += 1;
    this.#pending.push({ number: this.#factoryCount, factory });
  }

  /** How many registered factories have not been run yet. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /**
   * Materializes pending factories so their names are known. Each factory runs once,
   * even under concurrent flushes; a flush also waits for factories another flush
   * started. Rejects with the first failure (TOOL_FACTORY_FAILED or DUPLICATE_TOOL, in
   * registration order) after every other factory has materialized.
   */
  async flushPending(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    if (batch.length > 0) {
      const job = this.#materialize(batch);
      this.#inFlight.add(job);
      void job.then(() => this.#inFlight.delete(job));
    }
    const failures = (await Promise.all([...this.#inFlight])).flat();
    const first = failures[0];
    if (first === undefined) return;
    if (failures.length > 1) {
      throw new WorkerError(first.code, `${first.message} (and ${failures.length - 1} more tool failure(s))`, {
        ...("cause" in first ? { cause: first.cause } : {}),
        ...(first.tool === undefined ? {} : { tool: first.tool }),
      });
    }
    throw first;
  }

  /** Names of the materialized tools, sorted by UTF-16 code unit order. */
  names(): string[] {
    return [...this.#tools.keys()].sort(compareCodeUnits);
  }

  /** Definitions of the materialized tools, sorted by name. */
  definitions(): ToolDefinition[] {
    return this.names().map((name) => this.#tools.get(name)!.definition);
  }

  /** True when a materialized tool has this name. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /**
   * Runs one tool call and returns its tool message. Never rejects: an unknown tool, a
   * throwing tool or a non-string result becomes a message with `isError: true`.
   * `options.signal` reaches the tool; without one the call cannot be aborted.
   */
  async call(call: ToolCall, options?: Partial<ToolExecuteOptions>): Promise<ToolMessage> {
    const signal = options?.signal ?? new AbortController().signal;
    const base = { role: "tool", toolCallId: call.id, name: call.name } as const;
    const registered = this.#tools.get(call.name);
    if (registered === undefined) {
      const available = this.names();
      const error = new WorkerError(
        "UNKNOWN_TOOL",
        `unknown tool "${call.name}"; available tools: ${available.length === 0 ? "(none)" : available.join(", ")}`,
        { tool: call.name },
      );
      return failed(Object.freeze({ ...base, content: error.message, isError: true }), error);
    }
    try {
      // A clone, so a tool may mutate its input without touching the frozen history.
      const output: unknown = await registered.tool.execute(structuredClone(call.input), { signal });
      if (typeof output === "string") return Object.freeze({ ...base, content: output });
      if (typeof output === "object" && output !== null && typeof (output as ToolOutput).content === "string") {
        const images = normalizeImages((output as ToolOutput).images, `tool "${call.name}" images`);
        if (typeof images === "string") return Object.freeze({ ...base, content: images, isError: true });
        return deepFreeze({
          ...base,
          content: (output as ToolOutput).content,
          ...(images === undefined ? {} : { images }),
        });
      }
      return Object.freeze({
        ...base,
        content: `tool "${call.name}" returned ${output === null ? "null" : typeof output}, expected a string`,
        isError: true,
      });
    } catch (error) {
      return failed(Object.freeze({ ...base, content: errorText(error), isError: true }), error);
    }
  }

  /** Adds a checked tool, or returns the DUPLICATE_TOOL error without adding it. */
  #add(tool: Tool): WorkerError | undefined {
    if (this.#tools.has(tool.name)) {
      return new WorkerError(
        "DUPLICATE_TOOL",
        `a tool named "${tool.name}" is already registered; give one of them another name`,
        { tool: tool.name },
      );
    }
    let inputSchema: Record<string, unknown>;
    try {
      inputSchema = structuredClone(tool.inputSchema);
    } catch (cause) {
      return new WorkerError("INVALID_ARGUMENT", `tool "${tool.name}" has an inputSchema that is not plain data`, {
        cause,
        tool: tool.name,
      });
    }
    const definition = deepFreeze({ name: tool.name, description: tool.description, inputSchema });
    this.#tools.set(tool.name, { tool, definition });
    return undefined;
  }

  /** Runs a batch of factories concurrently; adds the tools in registration order. */
  async #materialize(batch: readonly Pending[]): Promise<WorkerError[]> {
    const settled = await Promise.allSettled(batch.map(async ({ factory }) => factory()));
    const failures: WorkerError[] = [];
    for (const [i, outcome] of settled.entries()) {
      const { number } = batch[i]!;
      if (outcome.status === "rejected") {
        failures.push(
          new WorkerError(
            "TOOL_FACTORY_FAILED",
            `tool factory #${number} failed: ${errorText(outcome.reason)}; fix the factory and register it again`,
            { cause: outcome.reason },
          ),
        );
        continue;
      }
      // A factory may build several tools (an MCP server's); they are added in its order.
      const tools: readonly unknown[] = Array.isArray(outcome.value) ? outcome.value : [outcome.value];
      for (const tool of tools) {
        const problem = toolProblem(tool);
        if (problem !== undefined) {
          failures.push(
            new WorkerError("TOOL_FACTORY_FAILED", `tool factory #${number} returned an unusable tool: ${problem}`),
          );
          continue;
        }
        const failure = this.#add(tool as Tool);
        if (failure !== undefined) failures.push(failure);
      }
    }
    return failures;
  }
}
