import { APICallError } from "@ai-sdk/provider";

/**
 * How each provider says a request does not fit the model's context window:
 * - Anthropic Messages: 400 `{"type":"error","error":{"type":"invalid_request_error",
 *   "message":"prompt is too long: 208310 tokens > 200000 maximum"}}` (older models: "input
 *   length and `max_tokens` exceed context limit: …").
 * - OpenAI Chat Completions: 400 `{"error":{"message":"This model's maximum context length is …",
 *   "type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`.
 * - OpenAI Responses: the same `code` in a 400 body, in a streamed `error` event
 *   (`{"type":"error","code":"context_length_exceeded",…}` or nested under `error`), or in
 *   `response.failed` (`response.error.code`).
 */
const ANTHROPIC_TOO_LONG = /^(?:prompt is too long|input length and `?max_tokens`? exceed context limit)/i;
const OPENAI_CODE = "context_length_exceeded";

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parsed(text: string | undefined): unknown {
  if (text === undefined || text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** True when a provider's error body (parsed JSON, or a streamed error event) says the prompt is too long. */
export function saysContextOverflow(body: unknown): boolean {
  const top = record(body);
  if (top === undefined) return false;
  const inner = record(top.error);
  const failed = record(record(top.response)?.error);
  for (const error of [top, inner, failed]) {
    if (error === undefined) continue;
    if (error.code === OPENAI_CODE) return true;
    if (error.type === "invalid_request_error" && typeof error.message === "string") {
      if (ANTHROPIC_TOO_LONG.test(error.message.trim())) return true;
    }
  }
  return false;
}

/**
 * True when what a model call threw is the provider refusing a prompt too long for its window:
 * an HTTP answer (its body) or an error event in the stream (the event itself).
 */
export function isContextOverflow(error: unknown): boolean {
  if (APICallError.isInstance(error)) {
    if (error.statusCode !== undefined && error.statusCode !== 400 && error.statusCode !== 413) {
      // A stream that failed with the provider's own event carries it as `data`, whatever status the SDK chose.
      return saysContextOverflow(error.data);
    }
    return saysContextOverflow(parsed(error.responseBody)) || saysContextOverflow(error.data);
  }
  return saysContextOverflow(error);
}
