import { createHash } from "node:crypto";
import type {
  LanguageModelV2Usage,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { APICallError } from "@ai-sdk/provider";
import type { JSONValue, SharedV3ProviderMetadata } from "@ai-sdk/provider";
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
import { anApi, StreamBrokeOff, toAiSdkError } from "./provider-error.ts";
import { logSdkWarnings, quietSdkWarnings } from "./quiet-warnings.ts";
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

function usageOf(usage: LanguageModelV3Usage | LanguageModelV2Usage | undefined): LlmUsage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const out: Record<string, number> = {};
  const put = (field: keyof LlmUsage, value: number | undefined): void => {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) out[field] = value;
  };
  if (typeof usage.inputTokens === "object" || typeof usage.outputTokens === "object") {
    // Specification v3: input and output are broken down.
    const v3 = usage as LanguageModelV3Usage;
    put("inputTokens", v3.inputTokens?.total);
    put("outputTokens", v3.outputTokens?.total);
    put("cacheReadTokens", v3.inputTokens?.cacheRead);
    put("cacheWriteTokens", v3.inputTokens?.cacheWrite);
  } else {
    const v2 = usage as LanguageModelV2Usage;
    put("inputTokens", v2.inputTokens);
    put("outputTokens", v2.outputTokens);
    put("cacheReadTokens", v2.cachedInputTokens);
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** A tool call as the model sent it: its input is JSON text. */
interface SpecToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: string;
  readonly providerExecuted?: boolean | undefined;
}

/** The call's input as the worker gets it: parsed JSON, `{}` for none, the text itself when it is not JSON. */
function toolInput(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) ?? {};
  } catch {
    return text;
  }
}

function toolCallsOf(calls: readonly SpecToolCall[]): ToolCall[] | undefined {
  // Tools a provider ran itself are its business; the worker gets the calls it must answer.
  const ours = calls.filter((call) => call.providerExecuted !== true);
  if (ours.length === 0) return undefined;
  // An unknown tool name or unparseable input is passed on as sent: the worker answers it
  // with an isError tool result the model sees, instead of the turn failing.
  return ours.map((call) => ({ id: call.toolCallId, name: call.toolName, input: toolInput(call.input) }));
}

/**
 * An {@link LlmClient} over any AI SDK language model: one model call per `complete`, the worker
 * keeps its tool loop. The client calls the model's own `doGenerate` / `doStream` (the AI SDK's
 * language-model specification), so `ai` itself is never loaded. The system prompt goes out
 * untouched and first; tools sorted by name; Anthropic gets cache breakpoints, OpenAI a
 * `prompt_cache_key`. Provider failures are retried as the AI SDK does, then reject with an
 * {@link AiSdkError}.
 */
export function aiSdkClient(model: AiSdkLanguageModel, options: AiSdkClientOptions = {}): LlmClient {
  check(options);
  // One type to call: v2 takes the same call options, and its answers are read either way below.
  const spec = resolveModel(model) as LanguageModelV3;
  const provider = spec.provider;
  const style = options.cacheStyle ?? cacheStyleOf(provider);
  const onWarning = options.onWarning;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const delay = options.retryDelay ?? timerDelay;

  const report = (warnings: readonly unknown[] | undefined): void => {
    if (warnings === undefined || warnings.length === 0) return;
    logSdkWarnings(warnings, provider, spec.modelId);
    if (onWarning !== undefined)
      for (const warning of warnings) onWarning({ provider, message: describeWarning(warning) });
  };

  return {
    async complete(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<LlmResponse> {
      quietSdkWarnings();
      const kind = providerKind(provider);
      // Everything that can throw before the timer starts is done first, so no timer outlives a bug.
      const prompt = modelPrompt(request.systemPrompt, request.messages, style, kind);
      const tools = modelTools(request.tools);
      const cacheKey =
        style !== "openai"
          ? undefined
          : typeof options.cacheKey === "function"
            ? (options.cacheKey(request) ?? defaultCacheKey(request))
            : (options.cacheKey ?? defaultCacheKey(request));
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
      const call: LanguageModelV3CallOptions = {
        prompt,
        ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        ...(tools === undefined ? {} : { tools, toolChoice: { type: "auto" } }),
        ...providerOptionsFor(kind, cacheKey, options.reasoning, options.maxOutputTokens),
        ...(abortSignal === undefined ? {} : { abortSignal }),
        ...(options.headers === undefined ? {} : { headers: options.headers }),
      };
      const emit = (event: LlmStreamEvent): void => {
        if (event.type === "text-delta") options.onText?.(event.text);
        callOptions.onEvent?.(event);
      };
      const retries = {
        maxRetries,
        delay,
        signal: abortSignal,
        onRetry: (attempt: number, delayMs: number, error: unknown) => {
          const code = toAiSdkError(error, provider, { timedOut: false, attempts: attempt });
          emit({ type: "retry", attempt, delayMs, code: AiSdkError.is(code) ? code.code : "PROVIDER_UNAVAILABLE" });
        },
      };
      let attempts = 1;
      try {
        if (callOptions.onEvent === undefined && options.onText === undefined) {
          const result = await withRetries(() => spec.doGenerate(call), retries);
          report(result.warnings);
          return {
            ...answer(result.content, result.usage, kind),
            ...responseMeta(result.response, result.finishReason),
          };
        }
        const { stream, response } = await withRetries(
          () => spec.doStream({ ...call, includeRawChunks: false }),
          retries,
        );
        const type = response?.headers?.["content-type"];
        if (type !== undefined && !type.includes("event-stream")) {
          await stream.cancel().catch(() => undefined);
          const label = provider.split(".")[0] || provider;
          throw new AiSdkError(
            "MALFORMED_RESPONSE",
            `${label} answered a streamed request with ${type}, not server-sent events; check the base URL points at ${anApi(label)}`,
            { provider, attempts: 1 },
          );
        }
        return await readStream(stream, kind, emit, report);
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
): Pick<LanguageModelV3CallOptions, "providerOptions"> {
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

function answer(
  content: readonly LanguageModelV3Content[],
  usage: LanguageModelV3Usage | undefined,
  kind: string,
): LlmResponse {
  let text = "";
  const calls: SpecToolCall[] = [];
  const reasoning: ReasoningPart[] = [];
  for (const part of content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "tool-call") calls.push(part);
    else if (part.type === "reasoning") {
      const data: Record<string, Record<string, JSONValue>> = {};
      mergeMetadata(data, part.providerMetadata);
      reasoning.push({ text: part.text, provider: kind, ...(Object.keys(data).length === 0 ? {} : { data }) });
    }
  }
  return response(text, calls, usage, reasoning);
}

/**
 * What failed once the answer had started: a broken connection (the provider wraps fetch's
 * `TypeError: terminated` in an APICallError) or the provider's own error event (Anthropic's
 * `overloaded_error`, a plain object) is the provider going away mid-answer; anything else
 * (an answer that could not be read, an abort) stays as it is.
 */
function midStream(error: unknown): unknown {
  if (isAbortError(error)) return error;
  if (!(error instanceof Error)) return new StreamBrokeOff(error);
  const cause = APICallError.isInstance(error) ? error.cause : error;
  return cause instanceof TypeError ? new StreamBrokeOff(cause) : error;
}

/** Merges provider metadata by provider key, later fields over earlier ones. */
function mergeMetadata(
  into: Record<string, Record<string, JSONValue>>,
  from: SharedV3ProviderMetadata | undefined,
): void {
  if (from === undefined || from === null) return;
  for (const [key, fields] of Object.entries(from)) {
    if (typeof fields === "object" && fields !== null)
      into[key] = { ...(into[key] ?? {}), ...(fields as Record<string, JSONValue>) };
  }
}

/** Reads a streamed answer to its end, handing text and reasoning to `emit` as they arrive. */
async function readStream(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  kind: string,
  emit: (event: LlmStreamEvent) => void,
  report: (warnings: readonly unknown[] | undefined) => void,
): Promise<LlmResponse> {
  const reader = stream.getReader();
  let text = "";
  const calls: SpecToolCall[] = [];
  const thinking = new Map<string, { text: string; data: Record<string, Record<string, JSONValue>> }>();
  let usage: LanguageModelV3Usage | undefined;
  let meta: ResponseMeta = {};
  let failure: { error: unknown } | undefined;
  let done = false;
  try {
    while (!done) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        done = true;
        throw midStream(error);
      }
      if (next.done) {
        done = true;
        break;
      }
      const part = next.value;
      switch (part.type) {
        case "text-delta":
          if (part.delta !== "") {
            text += part.delta;
            emit({ type: "text-delta", text: part.delta });
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
          if (part.type === "reasoning-delta" && part.delta !== "") {
            entry.text += part.delta;
            emit({ type: "reasoning-delta", text: part.delta });
          }
          break;
        }
        case "tool-call":
          calls.push(part);
          break;
        case "finish":
          usage = part.usage;
          meta = { ...meta, ...responseMeta(undefined, part.finishReason) };
          break;
        case "response-metadata":
          meta = { ...meta, ...responseMeta(part, undefined) };
          break;
        case "stream-start":
          report(part.warnings);
          break;
        case "error":
          failure ??= { error: part.error };
          break;
      }
    }
  } finally {
    // Stopped early (a listener threw, the body broke off, an abort): let the provider drop the connection.
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  if (failure !== undefined) throw midStream(failure.error);
  const reasoning: ReasoningPart[] = [...thinking.values()].map((entry) => ({
    text: entry.text,
    provider: kind,
    ...(Object.keys(entry.data).length === 0 ? {} : { data: entry.data }),
  }));
  return { ...response(text, calls, usage, reasoning), ...meta };
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

function response(
  text: string,
  calls: readonly SpecToolCall[],
  usage: LanguageModelV3Usage | LanguageModelV2Usage | undefined,
  reasoning: readonly ReasoningPart[] = [],
): LlmResponse {
  const toolCalls = toolCallsOf(calls);
  const counted = usageOf(usage);
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
