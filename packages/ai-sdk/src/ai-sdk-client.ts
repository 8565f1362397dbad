import { createHash } from "node:crypto";
import type { JSONValue, LanguageModelV3, LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import { APICallError } from "@ai-sdk/provider";
import type { LanguageModelUsage, ModelMessage, SystemModelMessage, TextStreamPart, ToolSet } from "ai";
import { jsonSchema, streamText } from "ai";
import type {
  LlmCallOptions,
  LlmClient,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmUsage,
  ReasoningPart,
  ToolCall,
} from "@insomnia/worker";
import { AiSdkError } from "./ai-sdk-error.ts";
import type { AiSdkLanguageModel } from "./language-model.ts";
import { resolveModel } from "./language-model.ts";
import { cacheStyleOf, modelPrompt, modelTools, providerKind } from "./model-messages.ts";
import type { CacheStyle } from "./model-messages.ts";
import { StreamBrokeOff, toAiSdkError } from "./provider-error.ts";
import { completedParts, mergeMetadata, specUsage } from "./completed-answer.ts";
import type { AnswerParts } from "./completed-answer.ts";
import { logSdkWarnings, quietSdkWarnings } from "./quiet-warnings.ts";
import { type CallRetries, retryingModel } from "./retrying-model.ts";
import type { RetryDelay } from "./retry.ts";
import { AttemptsFailed, DEFAULT_MAX_RETRIES, isAbortError, timerDelay, withRetries } from "./retry.ts";

/** A warning the provider reported for one call (an unsupported setting, …). */
export interface AiSdkWarning {
  readonly provider: string;
  readonly message: string;
}

/** Options of {@link aiSdkClient}. */
export interface AiSdkClientOptions {
  /** Most tokens the model may write per call. */
  maxOutputTokens?: number | undefined;
  /** Sampling temperature (0 to 2; what a provider accepts varies). */
  temperature?: number | undefined;
  /** Retries after a 429, 5xx or a failed connection, with backoff that honours `retry-after` (default: the SDK's 2). */
  maxRetries?: number | undefined;
  /**
   * Waits between two attempts (`ms`: the backoff, 2 s doubling, or the provider's `retry-after`);
   * must reject when `signal` aborts. Default: a timer. Tests pass one that records and returns at once.
   */
  retryDelay?: RetryDelay | undefined;
  /** Gives up a call (all attempts) after this many milliseconds. */
  timeoutMs?: number | undefined;
  /** Stops every call in flight; `complete` rejects with `ABORTED`. Per call, the worker passes its turn's signal. */
  abortSignal?: AbortSignal | undefined;
  /**
   * Turns on the model's reasoning: Anthropic extended thinking (`budgetTokens`, default from
   * `effort`: 2048 / 8192 / 24576), OpenAI reasoning effort with its reasoning summary.
   */
  reasoning?: { effort: "low" | "medium" | "high"; budgetTokens?: number | undefined } | undefined;
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string> | undefined;
  /**
   * OpenAI's `prompt_cache_key`: the pod segment the request belongs to, so requests of one
   * conversation land on the same cache. A string, or a function read on every call (the
   * segment changes on compaction). Default: a hash of the system prompt and tool definitions.
   */
  cacheKey?: string | ((request: LlmRequest) => string | undefined) | undefined;
  /** Which cache hints to send; default from the model's provider id. */
  cacheStyle?: CacheStyle | undefined;
  /** Gets the model's text as it arrives, on every call (besides the per-call `onEvent`). */
  onText?: ((text: string) => void) | undefined;
  /** Gets the warnings the provider reports (an unsupported setting, …); nothing is printed. */
  onWarning?: ((warning: AiSdkWarning) => void) | undefined;
}

function check(options: AiSdkClientOptions): void {
  const positive = (name: string, value: number | undefined, min: number): void => {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) {
      throw new AiSdkError(
        "INVALID_ARGUMENT",
        `${name} must be a whole number of at least ${min}, got ${String(value)}`,
      );
    }
  };
  positive("maxOutputTokens", options.maxOutputTokens, 1);
  positive("maxRetries", options.maxRetries, 0);
  positive("timeoutMs", options.timeoutMs, 1);
  if (options.temperature !== undefined && !(Number.isFinite(options.temperature) && options.temperature >= 0)) {
    throw new AiSdkError(
      "INVALID_ARGUMENT",
      `temperature must be a number of 0 or more, got ${String(options.temperature)}`,
    );
  }
  for (const name of ["onText", "onWarning", "retryDelay"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw new AiSdkError("INVALID_ARGUMENT", `${name} must be a function when given`);
    }
  }
}

/** The default OpenAI cache key: one per system prompt and tool list, so one per pod segment's prefix. */
function defaultCacheKey(request: LlmRequest): string {
  const hash = createHash("sha256").update(request.systemPrompt).update("\0");
  for (const tool of request.tools) hash.update(JSON.stringify([tool.name, tool.description, tool.inputSchema]));
  return `insomnia-${hash.digest("hex").slice(0, 40)}`;
}

/** The AI SDK's usage (`streamText`'s `finish-step`) as the worker keeps it: each count only when the provider reported it. */
function usageOf(usage: LanguageModelUsage | undefined): LlmUsage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const out: Record<string, number> = {};
  const put = (field: keyof LlmUsage, value: number | undefined): void => {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) out[field] = value;
  };
  put("inputTokens", usage.inputTokens);
  put("outputTokens", usage.outputTokens);
  put("cacheReadTokens", usage.inputTokenDetails?.cacheReadTokens);
  put("cacheWriteTokens", usage.inputTokenDetails?.cacheWriteTokens);
  return Object.keys(out).length === 0 ? undefined : out;
}

function toolCallsOf(calls: AnswerParts["calls"]): ToolCall[] | undefined {
  // Tools a provider ran itself are its business; the worker gets the calls it must answer.
  const ours = calls.filter((call) => call.providerExecuted !== true);
  if (ours.length === 0) return undefined;
  // An unknown tool name or unparseable input is passed on as sent: the worker answers it
  // with an isError tool result the model sees, instead of the turn failing.
  return ours.map((call) => ({ id: call.toolCallId, name: call.toolName, input: call.input }));
}

/** Nothing is printed: a failure reaches the caller as the stream's error part. */
const ignore = (): void => undefined;

/** Each converted tool's AI SDK tool, made once: `modelTools` hands out the same frozen object while a definition is unchanged. */
const sdkTools = new WeakMap<LanguageModelV3FunctionTool, ToolSet[string]>();

/** Tool definitions as the AI SDK's tool set, in the order given (sorted by name): no `execute`, so the SDK never runs one. */
function toolSet(tools: readonly LanguageModelV3FunctionTool[]): ToolSet {
  const set: ToolSet = {};
  for (const tool of tools) {
    let sdkTool = sdkTools.get(tool);
    if (sdkTool === undefined) {
      sdkTool = {
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: jsonSchema(tool.inputSchema),
      };
      if (Object.isFrozen(tool)) sdkTools.set(tool, sdkTool);
    }
    set[tool.name] = sdkTool;
  }
  return set;
}

/**
 * An {@link LlmClient} over any AI SDK language model: one model call per `complete`, the worker
 * keeps its tool loop. A call with a listener streams through the AI SDK's `streamText`; one
 * without completes through the provider model's own `doGenerate`. The system prompt goes out untouched and first;
 * tools sorted by name; Anthropic gets cache breakpoints, OpenAI a `prompt_cache_key`. Provider
 * failures are retried as the AI SDK does (each wait an event), then reject with an
 * {@link AiSdkError}.
 */
export function aiSdkClient(model: AiSdkLanguageModel, options: AiSdkClientOptions = {}): LlmClient {
  check(options);
  // A v2 model is typed as v3 here only: the AI SDK sees its real version and adapts it.
  const spec = resolveModel(model) as LanguageModelV3;
  const provider = spec.provider;
  const kind = providerKind(provider);
  const style = options.cacheStyle ?? cacheStyleOf(provider);
  const onWarning = options.onWarning;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const delay = options.retryDelay ?? timerDelay;
  // What every call sends besides its prompt and tools, built once per client: only OpenAI's
  // cache key depends on the request, so only then are the provider options built per call.
  const settings = {
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
  };
  const fixedProviderOptions =
    style === "openai" ? undefined : providerOptionsFor(kind, undefined, options.reasoning, options.maxOutputTokens);
  const headers = options.headers === undefined ? {} : { headers: options.headers };

  const report = (warnings: readonly unknown[] | undefined): void => {
    if (warnings === undefined || warnings.length === 0) return;
    if (onWarning !== undefined)
      for (const warning of warnings) onWarning({ provider, message: describeWarning(warning) });
  };

  return {
    async complete(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<LlmResponse> {
      quietSdkWarnings();
      // Everything that can throw before the timer starts is done first, so no timer outlives a bug.
      const prompt = modelPrompt(request.systemPrompt, request.messages, style, kind);
      const tools = modelTools(request.tools);
      const cacheKey =
        style !== "openai"
          ? undefined
          : typeof options.cacheKey === "function"
            ? (options.cacheKey(request) ?? defaultCacheKey(request))
            : (options.cacheKey ?? defaultCacheKey(request));
      const providerOptions =
        fixedProviderOptions ?? providerOptionsFor(kind, cacheKey, options.reasoning, options.maxOutputTokens);
      let timedOut = false;
      // The caller's signals: aborting any of them is an abort, whatever its reason.
      const stops: AbortSignal[] = [];
      if (options.abortSignal !== undefined) stops.push(options.abortSignal);
      if (callOptions.signal !== undefined) stops.push(callOptions.signal);
      const signals = [...stops];
      let timer: NodeJS.Timeout | undefined;
      if (options.timeoutMs !== undefined) {
        const controller = new AbortController();
        timer = setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException("the model call timed out", "TimeoutError"));
        }, options.timeoutMs);
        signals.push(controller.signal);
      }
      const abortSignal =
        signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
      const emit = (event: LlmStreamEvent): void => {
        if (event.type === "text-delta") options.onText?.(event.text);
        callOptions.onEvent?.(event);
      };
      const retries: CallRetries = {
        maxRetries,
        delay,
        signal: abortSignal,
        onRetry: (attempt: number, delayMs: number, error: unknown) => {
          const code = toAiSdkError(error, provider, { timedOut: false, attempts: attempt });
          emit({ type: "retry", attempt, delayMs, code: AiSdkError.is(code) ? code.code : "PROVIDER_UNAVAILABLE" });
        },
      };
      const signalOption = abortSignal === undefined ? {} : { abortSignal };
      let attempts = 1;
      try {
        if (callOptions.onEvent === undefined && options.onText === undefined) {
          // Nobody listens: the provider model's own doGenerate, the same request unstreamed.
          // generateText would validate the prompt and build steps first, which cost more than
          // the request itself against a local server (bench 7, "complete() through aiSdkClient").
          const result = await withRetries(
            () =>
              spec.doGenerate({
                prompt,
                ...settings,
                ...(tools === undefined ? {} : { tools, toolChoice: { type: "auto" } }),
                ...providerOptions,
                ...signalOption,
                ...headers,
              }),
            retries,
          );
          report(result.warnings);
          logSdkWarnings(result.warnings, provider, spec.modelId);
          return {
            ...response(completedParts(result.content, kind), specUsage(result.usage)),
            ...responseMeta(result.response, result.finishReason),
          };
        }
        // The AI SDK's own call settings; the system message and the history are already in its
        // message format (`modelPrompt`), so its conversion hands them on as they are.
        const [system, ...history] = prompt as [SystemModelMessage, ...ModelMessage[]];
        const result = streamText({
          model: retryingModel(spec, retries),
          system,
          messages: history,
          ...(tools === undefined ? {} : { tools: toolSet(tools) }),
          ...settings,
          ...providerOptions,
          ...signalOption,
          ...headers,
          // Retries are ours (see retryingModel); the request body is not kept twice.
          maxRetries: 0,
          experimental_include: { requestBody: false },
          onError: ignore,
        });
        return await readStream(result.fullStream, kind, emit, report);
      } catch (thrown) {
        let error = thrown;
        if (thrown instanceof AttemptsFailed) {
          error = thrown.error;
          attempts = thrown.attempts;
        }
        if (!timedOut && stops.some((signal) => signal.aborted)) {
          const label = provider.split(".")[0] || provider;
          throw new AiSdkError("ABORTED", `the call to ${label} was stopped before it finished`, {
            provider,
            attempts,
            cause: error,
          });
        }
        throw toAiSdkError(error, provider, { timedOut, attempts });
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    },
  };
}

/** Anthropic thinking budgets by effort, when the manifest gives none. */
const THINKING_BUDGET = { low: 2048, medium: 8192, high: 24576 } as const;

/** The call's provider options: OpenAI's cache key, and reasoning in each provider's own terms. */
function providerOptionsFor(
  kind: string,
  cacheKey: string | undefined,
  reasoning: AiSdkClientOptions["reasoning"],
  maxOutputTokens: number | undefined,
): { providerOptions?: Record<string, Record<string, JSONValue>> } {
  const openai: Record<string, JSONValue> = {};
  if (cacheKey !== undefined) openai.promptCacheKey = cacheKey;
  const options: Record<string, Record<string, JSONValue>> = {};
  if (reasoning !== undefined && kind === "anthropic") {
    let budget = reasoning.budgetTokens ?? THINKING_BUDGET[reasoning.effort];
    if (maxOutputTokens !== undefined) budget = Math.min(budget, Math.max(1024, maxOutputTokens - 1));
    options.anthropic = { thinking: { type: "enabled", budgetTokens: budget } };
  } else if (reasoning !== undefined && kind === "openai") {
    openai.reasoningEffort = reasoning.effort;
    openai.reasoningSummary = "auto";
    // Not stored at OpenAI: the reasoning comes back encrypted and goes out again from our log.
    openai.store = false;
    openai.include = ["reasoning.encrypted_content"];
  }
  if (Object.keys(openai).length > 0) options.openai = openai;
  return Object.keys(options).length === 0 ? {} : { providerOptions: options };
}

/**
 * What failed once the answer had started: a broken connection (the provider wraps fetch's
 * `TypeError: terminated` in an APICallError) or the provider's own error event (Anthropic's
 * `overloaded_error`, a plain object) is the provider going away mid-answer; anything else
 * (an answer that could not be read, an abort) stays as it is.
 */
function midStream(error: unknown): unknown {
  if (isAbortError(error) || error instanceof AttemptsFailed || AiSdkError.is(error)) return error;
  if (!(error instanceof Error)) return new StreamBrokeOff(error);
  const cause = APICallError.isInstance(error) ? error.cause : error;
  return cause instanceof TypeError ? new StreamBrokeOff(cause) : error;
}

/** A listener (`onEvent`, `onText`) threw: rethrown as it is, never taken for a provider failure. */
class ListenerFailed {
  constructor(readonly error: unknown) {}
}

/** The call was stopped by its signal: `streamText` ends its stream with an `abort` part instead of an error. */
class StreamAborted extends Error {
  override readonly name = "AbortError";
}

/**
 * Reads `streamText`'s full stream to its end, handing text and reasoning to `emit` as they
 * arrive. A failure before the answer started (after our retries) or mid-answer comes as an
 * `error` part; an abort as an `abort` part.
 */
async function readStream(
  stream: AsyncIterable<TextStreamPart<ToolSet>>,
  kind: string,
  emit: (event: LlmStreamEvent) => void,
  report: (warnings: readonly unknown[] | undefined) => void,
): Promise<LlmResponse> {
  let text = "";
  const calls: AnswerParts["calls"] = [];
  const thinking = new Map<string, { text: string; data: Record<string, Record<string, JSONValue>> }>();
  let usage: LanguageModelUsage | undefined;
  let meta: ResponseMeta = {};
  let failure: { error: unknown } | undefined;
  const tell = (event: LlmStreamEvent): void => {
    try {
      emit(event);
    } catch (error) {
      throw new ListenerFailed(error);
    }
  };
  try {
    for await (const part of stream) {
      switch (part.type) {
        case "text-delta":
          if (part.text !== "") {
            text += part.text;
            tell({ type: "text-delta", text: part.text });
          }
          break;
        case "reasoning-start":
        case "reasoning-delta":
        case "reasoning-end": {
          let entry = thinking.get(part.id);
          if (entry === undefined) {
            entry = { text: "", data: {} };
            thinking.set(part.id, entry);
          }
          mergeMetadata(entry.data, part.providerMetadata);
          if (part.type === "reasoning-delta" && part.text !== "") {
            entry.text += part.text;
            tell({ type: "reasoning-delta", text: part.text });
          }
          break;
        }
        case "tool-call":
          calls.push({
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            // A call the SDK could not parse keeps its text; no input at all is `{}`, as for a known tool.
            input:
              part.invalid === true && typeof part.input === "string" && part.input.trim() === "" ? {} : part.input,
            providerExecuted: part.providerExecuted,
          });
          break;
        case "finish-step":
          usage = part.usage;
          // The step's response metadata and the provider's own finish reason (`end_turn`, …) ride on this part.
          meta = responseMeta(part.response, part.rawFinishReason ?? part.finishReason);
          break;
        case "start-step":
          report(part.warnings);
          break;
        case "error":
          failure ??= { error: part.error };
          break;
        case "abort":
          failure ??= { error: new StreamAborted(part.reason ?? "the call was aborted") };
          break;
      }
    }
  } catch (error) {
    // Leaving the loop early cancels the stream, so the provider drops the connection.
    if (error instanceof ListenerFailed) throw error.error;
    throw midStream(error);
  }
  if (failure !== undefined) throw midStream(failure.error);
  const reasoning: ReasoningPart[] = [...thinking.values()].map((entry) => ({
    text: entry.text,
    provider: kind,
    ...(Object.keys(entry.data).length === 0 ? {} : { data: entry.data }),
  }));
  return { ...response({ text, calls, reasoning }, usageOf(usage)), ...meta };
}

/** What telemetry reports of an answer besides its content: the model that answered, its id, why it stopped. */
type ResponseMeta = Pick<LlmResponse, "model" | "responseId" | "finishReason">;

function responseMeta(
  response: { readonly id?: string | undefined; readonly modelId?: string | undefined } | undefined,
  finishReason: unknown,
): ResponseMeta {
  const meta: { -readonly [K in keyof ResponseMeta]: ResponseMeta[K] } = {};
  if (typeof response?.modelId === "string") meta.model = response.modelId;
  if (typeof response?.id === "string") meta.responseId = response.id;
  // Specification v3 gives the provider's own reason (`end_turn`, `tool_use`, …) besides a unified one.
  if (typeof finishReason === "string") meta.finishReason = finishReason;
  else if (typeof finishReason === "object" && finishReason !== null) {
    const { raw, unified } = finishReason as { raw?: unknown; unified?: unknown };
    if (typeof raw === "string") meta.finishReason = raw;
    else if (typeof unified === "string") meta.finishReason = unified;
  }
  return meta;
}

function response({ text, calls, reasoning }: AnswerParts, counted: LlmUsage | undefined): LlmResponse {
  const toolCalls = toolCallsOf(calls);
  return {
    content: text,
    ...(reasoning.length === 0 ? {} : { reasoning }),
    ...(toolCalls === undefined ? {} : { toolCalls }),
    ...(counted === undefined ? {} : { usage: counted }),
  };
}

function describeWarning(warning: unknown): string {
  if (typeof warning !== "object" || warning === null) return String(warning);
  const w = warning as { type?: unknown; feature?: unknown; setting?: unknown; details?: unknown; message?: unknown };
  const what = [w.feature, w.setting, w.message].find((v) => typeof v === "string") as string | undefined;
  const details = typeof w.details === "string" ? `: ${w.details}` : "";
  return `${typeof w.type === "string" ? `${w.type} ` : ""}${what ?? JSON.stringify(warning)}${details}`;
}
