import { hasBrand, InsomniaError } from "@insomnia/errors";
import type { InsomniaErrorOptions } from "@insomnia/errors";

/** Every way a model call through {@link aiSdkClient} can fail. */
export type AiSdkErrorCode =
  /** The provider answered 401 or 403: the key is missing, wrong or not allowed this model. */
  | "AUTH_FAILED"
  /** The provider answered 429 on every attempt. */
  | "RATE_LIMITED"
  /** 5xx answers, refused or reset connections, on every attempt. */
  | "PROVIDER_UNAVAILABLE"
  /** The call took longer than `timeoutMs`. */
  | "TIMEOUT"
  /** The provider refused the request itself (another 4xx: unknown model, bad parameter, context too long). */
  | "REQUEST_REJECTED"
  /** The provider said the prompt is too long for the model's context window (each provider's own way of saying it). */
  | "CONTEXT_OVERFLOW"
  /** The provider answered, but not with something the SDK could read. */
  | "MALFORMED_RESPONSE"
  /** The caller's abort signal stopped the call. */
  | "ABORTED"
  /** aiSdkClient was given an option it cannot use. */
  | "INVALID_ARGUMENT";

/** Options of an AiSdkError beyond its code and detail. */
export interface AiSdkErrorOptions extends InsomniaErrorOptions {
  /** The provider, as the model names it (`anthropic.messages`, `openai.responses`, …). */
  provider?: string | undefined;
  /** HTTP status of the last answer, when there was one. */
  status?: number | undefined;
  /** How many requests were sent (1 + the SDK's retries). */
  attempts?: number | undefined;
  /** Seconds the provider asked to wait (`retry-after`), for RATE_LIMITED. */
  retryAfterSeconds?: number | undefined;
}

/** The one error class of @insomnia/ai-sdk: a provider failure, with what to do about it. */
export class AiSdkError extends InsomniaError<AiSdkErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.ai-sdk.error");
  override readonly name = "AiSdkError";
  declare readonly provider?: string;
  declare readonly status?: number;
  declare readonly attempts?: number;
  declare readonly retryAfterSeconds?: number;

  constructor(code: AiSdkErrorCode, detail: string, options: AiSdkErrorOptions = {}) {
    super(code, detail, options);
    if (options.provider !== undefined) this.provider = options.provider;
    if (options.status !== undefined) this.status = options.status;
    if (options.attempts !== undefined) this.attempts = options.attempts;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** True for an AiSdkError, also one thrown by another installed copy of this package. */
  static is(value: unknown): value is AiSdkError {
    return hasBrand(value, AiSdkError.brand);
  }
}
