import { errorText } from "@insomnia/errors";
import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  NoContentGeneratedError,
  TypeValidationError,
} from "@ai-sdk/provider";
import { AiSdkError } from "./ai-sdk-error.ts";
import { isContextOverflow } from "./context-overflow.ts";
import { isAbortError as isAbort } from "./retry.ts";

/** The provider's name without the API suffix: `anthropic.messages` → `anthropic`. */
export function providerLabel(provider: string): string {
  return provider.split(".")[0] || provider;
}

function retryAfterSeconds(headers: Record<string, string> | undefined): number | undefined {
  if (headers === undefined) return undefined;
  const ms = Number.parseFloat(headers["retry-after-ms"] ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const raw = headers["retry-after"];
  if (raw === undefined) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** What the provider said about a refused request, shortened to one line. */
function providerSays(error: APICallError): string {
  const body = error.responseBody ?? "";
  let said = error.message;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === "string" && message !== "") said = message;
  } catch {
    // not JSON: keep the SDK's message
  }
  const line = said.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** The body of a streamed answer failed after the answer had started (a reset connection). */
export class StreamBrokeOff {
  constructor(readonly cause: unknown) {}
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** "an anthropic API", "an openai API", "a mistral API". */
export const anApi = (label: string): string => `${/^[aeiou]/i.test(label) ? "an" : "a"} ${label} API`;

// What Anthropic ("prompt is too long: 210000 tokens > 200000 maximum") and OpenAI
// ("context_length_exceeded", "maximum context length is …") say when the request does not fit.
const TOO_LONG =
  /prompt is too long|context[_ ]length[_ ]exceeded|maximum context length|too many tokens|context window/i;

/**
 * Turns what the last attempt of a model call threw into an AiSdkError that says what to do,
 * or returns the value unchanged when it is not a provider failure (a bug stays a bug).
 */
export function toAiSdkError(
  error: unknown,
  provider: string,
  context: { timedOut: boolean; attempts: number },
): unknown {
  if (AiSdkError.is(error)) return error;
  const label = providerLabel(provider);
  const last: unknown = error;
  const attempts = context.attempts;
  const base = { provider, attempts, cause: error };
  const after = attempts > 1 ? ` after ${plural(attempts, "attempt")}` : "";
  if (context.timedOut || (isAbort(last) && (last as Error).name === "TimeoutError")) {
    return new AiSdkError(
      "TIMEOUT",
      `${label} did not answer in time${after}; try again later, or raise the client's timeout`,
      base,
    );
  }
  if (isAbort(last)) {
    return new AiSdkError("ABORTED", `the call to ${label} was stopped before it finished`, base);
  }
  if (isContextOverflow(last instanceof StreamBrokeOff ? last.cause : last)) {
    // Its own code: a pod compacts the conversation and retries once (nothing is wrong with the model or settings).
    return new AiSdkError(
      "CONTEXT_OVERFLOW",
      `${label} refused the request: the conversation no longer fits the model's context window (${APICallError.isInstance(last) ? providerSays(last) : "prompt too long"}); compact it (pod compact), continue in a new conversation (pod run --new), or use a model with a larger window`,
      { ...base, ...(APICallError.isInstance(last) ? { status: last.statusCode } : {}) },
    );
  }
  if (last instanceof StreamBrokeOff) {
    // Not retried: the text so far was already handed to onText.
    return new AiSdkError(
      "PROVIDER_UNAVAILABLE",
      `${label} broke off its answer mid-stream (${errorText(last.cause)}); retry later`,
      { ...base, cause: last.cause },
    );
  }
  if (APICallError.isInstance(last)) {
    const status = last.statusCode;
    const withStatus = { ...base, status };
    if (status === 401 || status === 403) {
      return new AiSdkError(
        "AUTH_FAILED",
        `${label} answered ${status} ${status === 401 ? "Unauthorized" : "Forbidden"}: the API key is missing, wrong or not allowed this model (${providerSays(last)}); set a valid key and retry`,
        withStatus,
      );
    }
    if (status === 429) {
      const wait = retryAfterSeconds(last.responseHeaders);
      return new AiSdkError(
        "RATE_LIMITED",
        `${label} answered 429 Too Many Requests${after}${wait === undefined ? "" : ` and asked to wait ${Math.ceil(wait)}s`}; retry later`,
        { ...withStatus, retryAfterSeconds: wait },
      );
    }
    if (status !== undefined && status >= 200 && status < 300) {
      return new AiSdkError(
        "MALFORMED_RESPONSE",
        `${label} answered ${status} with a body that could not be read (${providerSays(last)}); retry, and check the base URL points at ${anApi(label)}`,
        withStatus,
      );
    }
    if (status === undefined || status >= 500 || status === 408 || status === 409) {
      return new AiSdkError(
        "PROVIDER_UNAVAILABLE",
        `${label} ${status === undefined ? `could not be reached (${errorText(last.cause ?? last)})` : `answered ${status}`}${after}; retry later, and check the provider's base URL and status`,
        withStatus,
      );
    }
    const says = providerSays(last);
    // Too long for the model's context window: the model name and settings are fine.
    const advice = TOO_LONG.test(`${says} ${last.responseBody ?? ""}`)
      ? "the conversation no longer fits the model's context window; continue in a new conversation (or a compacted one), or use a model with a larger window"
      : "check the model name and settings";
    return new AiSdkError(
      "REQUEST_REJECTED",
      `${label} refused the request with ${status}: ${says}; ${advice}`,
      withStatus,
    );
  }
  if (
    JSONParseError.isInstance(last) ||
    TypeValidationError.isInstance(last) ||
    InvalidResponseDataError.isInstance(last) ||
    EmptyResponseBodyError.isInstance(last) ||
    NoContentGeneratedError.isInstance(last)
  ) {
    return new AiSdkError(
      "MALFORMED_RESPONSE",
      `${label} sent an answer that could not be read (${errorText(last).replace(/\s+/g, " ").slice(0, 300)}); retry, and check the provider's base URL points at ${anApi(label)}`,
      base,
    );
  }
  return error;
}
