import { AiSdkError } from "@insomnia/ai-sdk";
import { InsomniaError } from "@insomnia/errors";
import { SegmentStoreError } from "@insomnia/pod";
import { WorkerError } from "@insomnia/worker";

/** An HTTP answer for a failure: status, headers and a JSON body `{ error: { code, message } }`. */
export interface HttpFailure {
  status: number;
  headers: Record<string, string>;
  body: { error: { code: string; message: string } };
}

const retryAfter = (seconds: number | undefined): Record<string, string> =>
  seconds === undefined ? {} : { "retry-after": String(Math.max(1, Math.ceil(seconds))) };

/**
 * Maps what a turn threw to HTTP from the errors' fields (code, the provider's `status`, a
 * lock's `retryAfterMs`), never from message text. Anything that is not ours is a 500.
 */
export function httpFailure(error: unknown): HttpFailure {
  // A model call's failure reaches the caller as the worker's CLIENT_FAILED with the client's error as cause.
  const inner: unknown = WorkerError.is(error) && error.code === "CLIENT_FAILED" ? error.cause : error;
  const answer = (status: number, code: string, message: string, headers: Record<string, string> = {}) => ({
    status,
    headers,
    body: { error: { code, message } },
  });
  if (AiSdkError.is(inner)) {
    switch (inner.code) {
      case "RATE_LIMITED":
        return answer(503, inner.code, inner.detail, retryAfter(inner.retryAfterSeconds ?? 30));
      case "PROVIDER_UNAVAILABLE":
      case "TIMEOUT":
        return answer(503, inner.code, inner.detail, retryAfter(30));
      case "CONTEXT_OVERFLOW":
        // The conversation no longer fits the model even after a compaction: the caller starts a new one.
        return answer(413, inner.code, inner.detail);
      case "REQUEST_REJECTED":
        // The provider's own 4xx (e.g. 413 or 400 for a prompt too long) is the client's problem when it is about size.
        return answer(inner.status === 413 ? 413 : 502, inner.code, inner.detail);
      default:
        // AUTH_FAILED, MALFORMED_RESPONSE: the service's configuration or the provider, not the caller.
        return answer(502, inner.code, inner.detail);
    }
  }
  if (SegmentStoreError.is(inner)) {
    if (inner.code === "SEGMENT_LOCKED") {
      const seconds = inner.lock?.retryAfterMs === undefined ? 1 : inner.lock.retryAfterMs / 1000;
      return answer(409, inner.code, "this pod is answering another request; retry later", retryAfter(seconds));
    }
    if (inner.code === "SEGMENT_UNAVAILABLE") return answer(503, inner.code, inner.detail, retryAfter(5));
  }
  if (WorkerError.is(inner) && inner.code === "MAX_ITERATIONS") return answer(502, "MAX_TURNS", inner.detail);
  if (InsomniaError.isInsomniaError(inner)) return answer(500, inner.code, inner.detail);
  return answer(500, "INTERNAL", "the service failed; see its log");
}
