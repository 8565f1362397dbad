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

/** What the model answers: text, tool calls when it wants tools run, and token usage when the client knows it. */
export interface LlmResponse {
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[] | undefined;
  /** Tokens this call used, as the provider reported them; kept on the assistant message. */
  readonly usage?: LlmUsage | undefined;
}

export type { LlmUsage } from "./message.ts";

/** The model behind the worker; an adapter to a real API implements this. */
export interface LlmClient {
  /** Sends one request to the model and returns its answer. */
  complete(request: LlmRequest): Promise<LlmResponse>;
}
