import type { LlmRequest } from "./llm-client.ts";
import type { Message } from "./message.ts";

/**
 * What a {@link CallGuard} is asked: before each model call of a turn (`before-call`), or once
 * after a call failed (`call-failed`, with the error the worker would throw).
 */
export interface GuardedCall {
  /** `before-call`: the call is about to be sent; `call-failed`: it failed with `error`. */
  readonly reason: "before-call" | "call-failed";
  /** The request about to be sent, or the one that failed: system prompt, history and tools as sent. */
  readonly request: LlmRequest;
  /** The worker's error for the failed call (its `cause` is what the client threw); only for `call-failed`. */
  readonly error?: unknown;
  /** The turn's signal: a summary call made by the guard should stop with the turn. */
  readonly signal: AbortSignal;
}

/**
 * Decides, before a model call or after a failed one, whether the history is replaced (a
 * compaction): resolves with the new history, or undefined to leave it as it is. After a
 * `call-failed` that replaced the history, the worker sends the call once more, never again.
 * A guard that throws fails the turn with that error.
 */
export type CallGuard = (call: GuardedCall) => Promise<readonly Message[] | undefined>;
