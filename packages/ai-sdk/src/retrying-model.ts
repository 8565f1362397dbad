import type { LanguageModelV3 } from "@ai-sdk/provider";
import { AiSdkError } from "./ai-sdk-error.ts";
import { anApi, providerLabel } from "./provider-error.ts";
import type { RetryDelay } from "./retry.ts";
import { withRetries } from "./retry.ts";

/** How one call retries: the attempts, the wait, the signal that stops it, and who hears of each retry. */
export interface CallRetries {
  readonly maxRetries: number;
  readonly delay: RetryDelay;
  readonly signal: AbortSignal | undefined;
  readonly onRetry: (attempt: number, delayMs: number, error: unknown) => void;
}

/**
 * The model a streamed call gives `streamText` (a completed call wraps `doGenerate` itself): the provider's own model with
 * our retry loop around `doGenerate` / `doStream` (where the AI SDK puts its own), so a retry's
 * wait is an event the caller sees and can abort; the SDK itself is called with `maxRetries: 0`.
 * A streamed request answered with anything but server-sent events is `MALFORMED_RESPONSE`
 * before the SDK reads it as an empty answer. Everything else (the specification version, so the
 * SDK adapts a v2 model as usual, `supportedUrls`, ids) is the provider's model's.
 */
export function retryingModel(model: LanguageModelV3, retries: CallRetries): LanguageModelV3 {
  const doGenerate: LanguageModelV3["doGenerate"] = (options) => withRetries(() => model.doGenerate(options), retries);
  const doStream: LanguageModelV3["doStream"] = async (options) => {
    const result = await withRetries(() => model.doStream(options), retries);
    const type = result.response?.headers?.["content-type"];
    if (type !== undefined && !type.includes("event-stream")) {
      await result.stream.cancel().catch(() => undefined);
      const label = providerLabel(model.provider);
      throw new AiSdkError(
        "MALFORMED_RESPONSE",
        `${label} answered a streamed request with ${type}, not server-sent events; check the base URL points at ${anApi(label)}`,
        { provider: model.provider, attempts: 1 },
      );
    }
    return result;
  };
  // A new object, not a Proxy or a prototype child: a frozen model (non-writable methods) or one
  // whose getters read private fields must keep working.
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate,
    doStream,
  };
}
