import type { Attributes, Context, Span, Tracer, TracerProvider } from "@opentelemetry/api";
import { context as otelContext, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { LlmRequest, LlmResponse } from "./llm-client.ts";
import type { LlmUsage, Message, ToolCall, ToolMessage } from "./message.ts";

/*
 * OpenTelemetry spans of a turn, named and filled as the GenAI semantic conventions say
 * (gen-ai-agent-spans.md, gen-ai-spans.md and anthropic.md of open-telemetry/semantic-conventions-genai):
 * `invoke_agent {agent}` per turn, `chat {model}` per model call and `execute_tool {tool}`
 * per tool call, the last two children of the first. Only `@opentelemetry/api` is used: with
 * no SDK registered every span is the API's no-op one and nothing is recorded.
 */

/** The instrumentation scope of every span the worker makes. */
export const TRACER_NAME = "@insomnia/worker";

/** Who the worker's spans say is called, and whether message content goes on them. */
export interface WorkerTelemetry {
  /** `gen_ai.provider.name`: `anthropic`, `openai`, or another well-known value (default `unknown`). */
  readonly providerName?: string | undefined;
  /** `gen_ai.request.model`: the model requested; also in the `chat {model}` span name. */
  readonly requestModel?: string | undefined;
  /** `gen_ai.agent.name` (e.g. the pod's name); also in the `invoke_agent {name}` span name. */
  readonly agentName?: string | undefined;
  /** `gen_ai.agent.id`. */
  readonly agentId?: string | undefined;
  /** `server.address` of a model call: the provider's host (with `serverPort`, `server.port`). */
  readonly serverAddress?: string | undefined;
  readonly serverPort?: number | undefined;
  /** `gen_ai.conversation.id`, read when a turn starts (it may become known only then). */
  readonly conversationId?: (() => string | undefined) | string | undefined;
  /**
   * Records prompts, answers and tool arguments/results on the spans (`gen_ai.system_instructions`,
   * `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`). Default: what `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
   * says (`true`, `SPAN_ONLY` or `SPAN_AND_EVENT` turn it on), else off.
   */
  readonly captureMessageContent?: boolean | undefined;
  /** Where spans go; default the global provider (`trace.getTracerProvider()`). */
  readonly tracerProvider?: TracerProvider | undefined;
}

/** Values of the content opt-in variable that record content on spans (we emit no events). */
const CAPTURE_ON_SPANS = new Set(["TRUE", "SPAN_ONLY", "SPAN_AND_EVENT"]);

/** Whether `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` in `env` opts in to content on spans. */
export function contentCaptureFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  const value = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT;
  return value !== undefined && CAPTURE_ON_SPANS.has(value.trim().toUpperCase());
}

/** The worker's telemetry settings, checked and resolved once. */
export interface ResolvedTelemetry {
  readonly tracer: Tracer;
  readonly settings: WorkerTelemetry;
  readonly captureContent: boolean;
}

/** Resolves the options of a Worker (undefined: the global provider, content per the environment). */
export function resolveTelemetry(settings: WorkerTelemetry | undefined): ResolvedTelemetry {
  const given = settings ?? {};
  const provider = given.tracerProvider ?? trace.getTracerProvider();
  return {
    tracer: provider.getTracer(TRACER_NAME),
    settings: given,
    captureContent:
      given.captureMessageContent ?? (typeof process === "undefined" ? false : contentCaptureFromEnv(process.env)),
  };
}

/** The error code a span reports as `error.type`: ours (`code`) where there is one, else the class name. */
export function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, cause } = error as { code?: unknown; cause?: unknown };
    // A client failure wraps the provider's coded error (RATE_LIMITED, …): that is what the user is shown.
    if (code === "CLIENT_FAILED" && typeof cause === "object" && cause !== null) {
      const inner = (cause as { code?: unknown }).code;
      if (typeof inner === "string" && inner !== "") return inner;
    }
    if (typeof code === "string" && code !== "") return code;
    if (error instanceof Error && error.name !== "Error") return error.name;
  }
  return "_OTHER";
}

/** Marks a span failed: `error.type` our code, status ERROR with the message. */
export function recordFailure(span: Span, error: unknown, type: string = errorType(error)): void {
  span.setAttribute("error.type", type);
  const message = error instanceof Error ? error.message : String(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

function conversationOf(settings: WorkerTelemetry): string | undefined {
  const id = typeof settings.conversationId === "function" ? settings.conversationId() : settings.conversationId;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** Attributes every span of a turn shares: provider, model, agent, conversation. */
function sharedAttributes(settings: WorkerTelemetry, conversationId: string | undefined): Attributes {
  const attributes: Attributes = { "gen_ai.provider.name": settings.providerName ?? "unknown" };
  if (settings.requestModel !== undefined) attributes["gen_ai.request.model"] = settings.requestModel;
  if (settings.agentName !== undefined) attributes["gen_ai.agent.name"] = settings.agentName;
  if (settings.agentId !== undefined) attributes["gen_ai.agent.id"] = settings.agentId;
  if (conversationId !== undefined) attributes["gen_ai.conversation.id"] = conversationId;
  return attributes;
}

/** One turn's span and the context its model and tool calls start in. */
export interface TurnTrace {
  readonly span: Span;
  readonly context: Context;
  readonly conversationId: string | undefined;
  /** Adds one model call's usage to the turn's totals. */
  addUsage(usage: LlmUsage | undefined): void;
  /** Ends the turn's span: ok, or failed with `error`. */
  end(error?: unknown): void;
}

/** Starts the `invoke_agent` span of a turn, a child of the caller's active span. */
export function startTurn(telemetry: ResolvedTelemetry): TurnTrace {
  const { settings, tracer } = telemetry;
  const conversationId = conversationOf(settings);
  const name = settings.agentName === undefined ? "invoke_agent" : `invoke_agent ${settings.agentName}`;
  const span = tracer.startSpan(
    name,
    {
      kind: SpanKind.INTERNAL,
      attributes: { "gen_ai.operation.name": "invoke_agent", ...sharedAttributes(settings, conversationId) },
    },
    otelContext.active(),
  );
  const totals: Record<string, number> = {};
  const add = (key: string, value: number | undefined): void => {
    if (value !== undefined) totals[key] = (totals[key] ?? 0) + value;
  };
  return {
    span,
    context: trace.setSpan(otelContext.active(), span),
    conversationId,
    addUsage(usage) {
      if (usage === undefined) return;
      add("gen_ai.usage.input_tokens", usage.inputTokens);
      add("gen_ai.usage.output_tokens", usage.outputTokens);
      add("gen_ai.usage.cache_read.input_tokens", usage.cacheReadTokens);
      add("gen_ai.usage.cache_creation.input_tokens", usage.cacheWriteTokens);
    },
    end(error) {
      if (!span.isRecording()) return;
      // A new conversation gets its id while its first turn runs (a pod creates its log then).
      const known = conversationId ?? conversationOf(settings);
      if (conversationId === undefined && known !== undefined) span.setAttribute("gen_ai.conversation.id", known);
      span.setAttributes(totals);
      if (error !== undefined) recordFailure(span, error);
      span.end();
    },
  };
}

/**
 * Token counts as the conventions define them. `inputTokens` is already the whole input
 * (Anthropic's `input_tokens` + `cache_read_input_tokens` + `cache_creation_input_tokens`,
 * which is how the AI SDK's total and our ledger count it), and the cache figures are parts of it.
 */
export function usageAttributes(usage: LlmUsage | undefined): Attributes {
  const attributes: Attributes = {};
  if (usage === undefined) return attributes;
  if (usage.inputTokens !== undefined) attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
  if (usage.outputTokens !== undefined) attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
  if (usage.cacheReadTokens !== undefined) attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined)
    attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cacheWriteTokens;
  return attributes;
}

/** Where a model or tool call's span goes: under a turn, or (a call outside a turn, e.g. a compaction's summary) the active span. */
export interface ChatTraceParent {
  readonly context?: Context | undefined;
  readonly conversationId?: string | undefined;
}

/** One model call's span. */
export interface ChatTrace {
  readonly span: Span;
  readonly context: Context;
  /** Ends the span with what the model answered (already checked). */
  succeed(
    response: Pick<LlmResponse, "content" | "toolCalls" | "usage" | "model" | "responseId" | "finishReason">,
  ): void;
  /** Ends the span as failed with `error`. */
  fail(error: unknown): void;
}

/** Starts the `chat {model}` span of one model call. */
export function startChat(telemetry: ResolvedTelemetry, request: LlmRequest, parent: ChatTraceParent = {}): ChatTrace {
  const { settings, tracer, captureContent } = telemetry;
  const conversationId = parent.conversationId ?? conversationOf(settings);
  const name = settings.requestModel === undefined ? "chat" : `chat ${settings.requestModel}`;
  const base = parent.context ?? otelContext.active();
  const attributes: Attributes = { "gen_ai.operation.name": "chat", ...sharedAttributes(settings, conversationId) };
  if (settings.serverAddress !== undefined) attributes["server.address"] = settings.serverAddress;
  if (settings.serverAddress !== undefined && settings.serverPort !== undefined)
    attributes["server.port"] = settings.serverPort;
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, base);
  if (captureContent && span.isRecording()) {
    span.setAttribute("gen_ai.system_instructions", JSON.stringify([{ type: "text", content: request.systemPrompt }]));
    span.setAttribute("gen_ai.input.messages", JSON.stringify(request.messages.map(inputMessage)));
  }
  return {
    span,
    context: trace.setSpan(base, span),
    succeed(response) {
      if (!span.isRecording()) return;
      const attributes = usageAttributes(response.usage);
      if (response.model !== undefined) attributes["gen_ai.response.model"] = response.model;
      if (response.responseId !== undefined) attributes["gen_ai.response.id"] = response.responseId;
      if (response.finishReason !== undefined) attributes["gen_ai.response.finish_reasons"] = [response.finishReason];
      if (captureContent) attributes["gen_ai.output.messages"] = JSON.stringify([outputMessage(response)]);
      span.setAttributes(attributes);
      span.end();
    },
    fail(error) {
      if (!span.isRecording()) return;
      recordFailure(span, error);
      span.end();
    },
  };
}

/** Starts the `execute_tool {name}` span of one tool call. */
export function startTool(
  telemetry: ResolvedTelemetry,
  call: ToolCall,
  describe: () => string | undefined,
  parent: ChatTraceParent = {},
): { span: Span; context: Context; end(result: ToolMessage, error: unknown): void } {
  const { tracer, captureContent, settings } = telemetry;
  const base = parent.context ?? otelContext.active();
  const conversationId = parent.conversationId ?? conversationOf(settings);
  const attributes: Attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.name,
    "gen_ai.tool.call.id": call.id,
    "gen_ai.tool.type": "function",
  };
  if (conversationId !== undefined) attributes["gen_ai.conversation.id"] = conversationId;
  const span = tracer.startSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL, attributes }, base);
  if (span.isRecording()) {
    const description = describe();
    if (description !== undefined) span.setAttribute("gen_ai.tool.description", description);
    if (captureContent) span.setAttribute("gen_ai.tool.call.arguments", safeJson(call.input));
  }
  return {
    span,
    context: trace.setSpan(base, span),
    end(result, error) {
      if (!span.isRecording()) return;
      if (captureContent) span.setAttribute("gen_ai.tool.call.result", result.content);
      // A tool's failure is a result the model sees; the span still says it failed, with the tool's code when it threw one.
      if (result.isError === true) {
        const type = error === undefined ? "_OTHER" : errorType(error);
        recordFailure(
          span,
          error ?? new Error(result.content),
          type === "_OTHER" || type === "Error" ? "TOOL_FAILED" : type,
        );
      }
      span.end();
    },
  };
}

/** Runs `fn` with `ctx` active, so spans made beneath it (an HTTP client's, an MCP client's) nest. */
export function within<T>(ctx: Context, fn: () => T): T {
  return otelContext.with(ctx, fn);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return String(value);
  }
}

/** A message in the conventions' input-messages shape (role and parts). */
function inputMessage(message: Message): Record<string, unknown> {
  if (message.role === "tool") {
    return {
      role: "tool",
      parts: [{ type: "tool_call_response", id: message.toolCallId, result: message.content }],
    };
  }
  if (message.role === "user") {
    // Images are left out: a span attribute is no place for megabytes of base64.
    return { role: "user", parts: [{ type: "text", content: message.content }] };
  }
  return { role: "assistant", parts: assistantParts(message.content, message.toolCalls) };
}

function assistantParts(content: string, toolCalls: readonly ToolCall[] | undefined): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  if (content !== "") parts.push({ type: "text", content });
  for (const call of toolCalls ?? [])
    parts.push({ type: "tool_call", id: call.id, name: call.name, arguments: call.input });
  return parts;
}

function outputMessage(response: Pick<LlmResponse, "content" | "toolCalls" | "finishReason">): Record<string, unknown> {
  return {
    role: "assistant",
    parts: assistantParts(response.content, response.toolCalls),
    finish_reason: response.finishReason ?? (response.toolCalls === undefined ? "stop" : "tool_call"),
  };
}
