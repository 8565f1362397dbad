import type { ReasoningPart } from "./content-parts.ts";
import type { LlmUsage, Message, ToolCall } from "./message.ts";
import type { ToolDefinition } from "./tool.ts";

/** What the worker sends to the model on every iteration. */
export interface LlmRequest {
  /** Exactly the string given to Worker.setSystemPrompt, never modified. */
  readonly systemPrompt: string;
  /** The whole history so far, oldest first. */
  readonly messages: readonly Message[];
  /** Definitions of the materialized tools, sorted by name. */
  readonly tools: readonly ToolDefinition[];
}

/** What the model answers: text, tool calls when it wants tools run, reasoning and token usage when the client has them. */
export interface LlmResponse {
  /** The whole text; for a client that streamed it, exactly its text deltas joined. */
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[] | undefined;
  /** Tokens this call used, as the provider reported them; kept on the assistant message. */
  readonly usage?: LlmUsage | undefined;
  /** The model's reasoning with the provider's opaque data, as received. */
  readonly reasoning?: readonly ReasoningPart[] | undefined;
  /** The model that answered, as the provider named it (telemetry's `gen_ai.response.model`). */
  readonly model?: string | undefined;
  /** The provider's id of this answer (telemetry's `gen_ai.response.id`). */
  readonly responseId?: string | undefined;
  /** Why the model stopped, as the provider said it (`end_turn`, `tool_use`, `stop`, …). */
  readonly finishReason?: string | undefined;
}

/** What a streaming client reports while one model call runs, in order. */
export type LlmStreamEvent =
  | { readonly type: "text-delta"; readonly text: string }
  | { readonly type: "reasoning-delta"; readonly text: string }
  /** A failed attempt will be retried after `delayMs`; `code` says why (e.g. `RATE_LIMITED`). */
  | { readonly type: "retry"; readonly attempt: number; readonly delayMs: number; readonly code: string };

/** Per-call options the worker passes to {@link LlmClient.complete}. */
export interface LlmCallOptions {
  /** Aborted when the turn is cancelled: the client stops the call (and any wait before a retry) and rejects. */
  readonly signal?: AbortSignal | undefined;
  /** Gets text and reasoning as they arrive, and retries; a client that does not stream never calls it. */
  readonly onEvent?: ((event: LlmStreamEvent) => void) | undefined;
}

export type { LlmUsage } from "./message.ts";

/** The model behind the worker; an adapter to a real API implements this. */
export interface LlmClient {
  /**
   * Sends one request to the model and returns its answer. A streaming client hands text to
   * `options.onEvent` as it arrives; one that only completes ignores it and still works.
   */
  complete(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResponse>;
}
