import { createHash } from "node:crypto";
import type { LlmClient, LlmRequest, LlmResponse, LlmUsage, ToolCall } from "@insomnia/worker";
import type { LanguageModel, LanguageModelUsage, ModelMessage, SystemModelMessage, ToolSet } from "ai";
import { generateText, streamText } from "ai";
import { AiSdkError } from "./ai-sdk-error.ts";
import { cacheStyleOf, modelMessages, modelTools, systemMessage } from "./model-messages.ts";
import type { CacheStyle } from "./model-messages.ts";
import { quietSdkWarnings } from "./quiet-warnings.ts";
import { toAiSdkError } from "./provider-error.ts";

/** A warning the SDK or the provider reported for one call (an unsupported setting, …). */
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
  /** Gives up a call (all attempts) after this many milliseconds. */
  timeoutMs?: number | undefined;
  /** Stops the call in flight; `complete` rejects with `ABORTED`. */
  abortSignal?: AbortSignal | undefined;
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
  /** Gets the model's text as it arrives; when set, the call streams. */
  onText?: ((text: string) => void) | undefined;
  /** Gets the warnings the SDK would otherwise print to the console. */
  onWarning?: ((warning: AiSdkWarning) => void) | undefined;
}

/** The provider id of a model (`anthropic.messages`); a bare string id goes to the AI SDK gateway. */
function providerOf(model: LanguageModel): string {
  return typeof model === "string" ? "gateway" : model.provider;
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
  for (const name of ["onText", "onWarning"] as const) {
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

function usageOf(usage: LanguageModelUsage | undefined): LlmUsage | undefined {
  if (usage === undefined) return undefined;
  const out: Record<string, number> = {};
  const put = (field: keyof LlmUsage, value: number | undefined): void => {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) out[field] = value;
  };
  put("inputTokens", usage.inputTokens);
  put("outputTokens", usage.outputTokens);
  put("cacheReadTokens", usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens);
  put("cacheWriteTokens", usage.inputTokenDetails?.cacheWriteTokens);
  return Object.keys(out).length === 0 ? undefined : out;
}

interface SdkToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

function toolCallsOf(calls: readonly SdkToolCall[]): ToolCall[] | undefined {
  if (calls.length === 0) return undefined;
  // An unknown tool name or unparseable input is passed on as sent: the worker answers it
  // with an isError tool result the model sees, instead of the turn failing.
  return calls.map((call) => ({ id: call.toolCallId, name: call.toolName, input: call.input ?? {} }));
}

/**
 * An {@link LlmClient} over any AI SDK `LanguageModel`: one model call per `complete`, the
 * worker keeps its tool loop. The system prompt goes out untouched and first; tools sorted by
 * name; Anthropic gets cache breakpoints, OpenAI a `prompt_cache_key`. Provider failures
 * reject with an {@link AiSdkError}.
 */
export function aiSdkClient(model: LanguageModel, options: AiSdkClientOptions = {}): LlmClient {
  check(options);
  const provider = providerOf(model);
  const style = options.cacheStyle ?? cacheStyleOf(provider);
  const onWarning = options.onWarning;

  return {
    async complete(request: LlmRequest): Promise<LlmResponse> {
      quietSdkWarnings();
      const system: SystemModelMessage = systemMessage(request.systemPrompt, style);
      const messages: ModelMessage[] = modelMessages(request.messages, style);
      const tools: ToolSet | undefined = modelTools(request.tools);
      const cacheKey =
        style !== "openai"
          ? undefined
          : typeof options.cacheKey === "function"
            ? (options.cacheKey(request) ?? defaultCacheKey(request))
            : (options.cacheKey ?? defaultCacheKey(request));
      let timedOut = false;
      const signals: AbortSignal[] = [];
      if (options.abortSignal !== undefined) signals.push(options.abortSignal);
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
      const call = {
        model,
        system,
        messages,
        ...(tools === undefined ? {} : { tools }),
        ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
        ...(abortSignal === undefined ? {} : { abortSignal }),
        ...(options.headers === undefined ? {} : { headers: options.headers }),
        ...(cacheKey === undefined ? {} : { providerOptions: { openai: { promptCacheKey: cacheKey } } }),
      };
      const report = (warnings: readonly unknown[] | undefined): void => {
        if (onWarning === undefined || warnings === undefined) return;
        for (const warning of warnings) onWarning({ provider, message: describeWarning(warning) });
      };
      try {
        if (options.onText === undefined) {
          const result = await generateText(call);
          report(result.warnings);
          return response(result.text, result.toolCalls, result.usage);
        }
        const onText = options.onText;
        let failure: { error: unknown } | undefined;
        const result = streamText({
          ...call,
          // The default prints the error to the console; it is thrown from complete() instead.
          onError: ({ error }) => {
            failure ??= { error };
          },
        });
        for await (const part of result.fullStream) {
          if (part.type === "text-delta") onText(part.text);
          else if (part.type === "error") failure ??= { error: part.error };
        }
        if (failure !== undefined) throw failure.error;
        const [text, toolCalls, usage, warnings] = await Promise.all([
          result.text,
          result.toolCalls,
          result.usage,
          result.warnings,
        ]);
        report(warnings);
        return response(text, toolCalls, usage);
      } catch (error) {
        throw toAiSdkError(error, provider, { timedOut });
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    },
  };
}

function response(text: string, calls: readonly SdkToolCall[], usage: LanguageModelUsage | undefined): LlmResponse {
  const toolCalls = toolCallsOf(calls);
  const counted = usageOf(usage);
  return {
    content: text,
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
