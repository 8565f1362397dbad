import { APICallError } from "@ai-sdk/provider";

/** Waits `ms` milliseconds between two attempts; rejects when `signal` aborts first. */
export type RetryDelay = (ms: number, signal: AbortSignal | undefined) => Promise<void>;

/** The AI SDK's defaults (`maxRetries: 2`, 2 s, doubling), kept so a call behaves as it did through generateText. */
export const DEFAULT_MAX_RETRIES = 2;
export const INITIAL_RETRY_DELAY_MS = 2000;
const BACKOFF_FACTOR = 2;
/** A `retry-after` longer than this is ignored in favour of the backoff, unless the backoff is longer still. */
const LONGEST_HONOURED_WAIT_MS = 60_000;

/** The default delay: a timer, cut short by the abort signal. */
export const timerDelay: RetryDelay = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function abortReason(signal: AbortSignal | undefined): unknown {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException("the wait before a retry was aborted", "AbortError");
}

/** True for the errors an abort signal produces (ours, fetch's, a timeout's). */
export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");
}

/**
 * The wait before the next attempt: the provider's `retry-after-ms` or `retry-after` (seconds or
 * an HTTP date) when it sent one of under a minute (or longer than the backoff), else the
 * exponential backoff. The same rule as the AI SDK's.
 */
export function retryDelayMs(error: unknown, backoffMs: number, now: number = Date.now()): number {
  const headers = APICallError.isInstance(error) ? error.responseHeaders : undefined;
  if (headers === undefined) return backoffMs;
  let ms: number | undefined;
  const afterMs = headers["retry-after-ms"];
  if (afterMs) {
    const parsed = Number.parseFloat(afterMs);
    if (!Number.isNaN(parsed)) ms = parsed;
  }
  const after = headers["retry-after"];
  if (after && ms === undefined) {
    const seconds = Number.parseFloat(after);
    ms = Number.isNaN(seconds) ? Date.parse(after) - now : seconds * 1000;
  }
  if (ms !== undefined && !Number.isNaN(ms) && ms >= 0 && (ms < LONGEST_HONOURED_WAIT_MS || ms < backoffMs)) return ms;
  return backoffMs;
}

/** What a failed call threw, with how many requests it took. */
export class AttemptsFailed {
  constructor(
    readonly error: unknown,
    readonly attempts: number,
  ) {}
}

/**
 * Runs `attempt` until it succeeds, retrying what the provider marked retryable (429, 5xx, 408,
 * 409, a failed connection) up to `maxRetries` times with exponential backoff. Rejects with
 * {@link AttemptsFailed}; an abort is never retried.
 */
export async function withRetries<T>(
  attempt: () => PromiseLike<T>,
  options: {
    maxRetries: number;
    delay: RetryDelay;
    signal: AbortSignal | undefined;
    /** Told before each wait: the attempt that failed (1-based), the wait, and its error. */
    onRetry?: ((attempt: number, delayMs: number, error: unknown) => void) | undefined;
  },
): Promise<T> {
  let backoff = INITIAL_RETRY_DELAY_MS;
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      const retryable = APICallError.isInstance(error) && error.isRetryable && !isAbortError(error);
      if (!retryable || attempts > options.maxRetries) throw new AttemptsFailed(error, attempts);
      const wait = retryDelayMs(error, backoff);
      try {
        options.onRetry?.(attempts, wait, error);
        options.signal?.throwIfAborted();
        await options.delay(wait, options.signal);
      } catch (stopped) {
        throw new AttemptsFailed(stopped, attempts);
      }
      backoff *= BACKOFF_FACTOR;
    }
  }
}
