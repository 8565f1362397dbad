import type { LlmUsage } from "./message.ts";

/** What a turn reports while it runs, in order of occurrence. */
export type TurnEvent =
  /** A model call starts (the first is iteration 1). */
  | { readonly type: "model-call"; readonly iteration: number }
  /** Text as it arrives; one model call's deltas join to exactly its logged text. */
  | { readonly type: "text-delta"; readonly text: string }
  | { readonly type: "reasoning-delta"; readonly text: string }
  /** A tool is about to run. */
  | { readonly type: "tool-call"; readonly id: string; readonly name: string; readonly input: unknown }
  | { readonly type: "tool-result"; readonly id: string; readonly name: string; readonly isError: boolean }
  /** The model call failed and is retried after `delayMs`. */
  | { readonly type: "retry"; readonly attempt: number; readonly delayMs: number; readonly code: string }
  /** The tokens one model call used. */
  | { readonly type: "usage"; readonly usage: LlmUsage };

/** Per-turn options of run() and resume(). */
export interface TurnOptions {
  /** Stops the turn: the model call and any running tool get it. */
  readonly signal?: AbortSignal | undefined;
  /** Gets the turn's events as they happen; if it throws, the turn stops and rejects with that error. */
  readonly onEvent?: ((event: TurnEvent) => void) | undefined;
  /** Makes a retried run() idempotent (ignored by resume()). */
  readonly turnId?: string | undefined;
}

/** The result text of a tool call the turn was aborted before it finished. */
export const INTERRUPTED_RESULT = "interrupted";

/** The user message resume() sends after an interrupted answer, so the model goes on from it. */
export const CONTINUE_PROMPT = "Your previous answer was interrupted. Continue it from exactly where it stopped.";
