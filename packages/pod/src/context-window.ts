import { baseModelId } from "./price-table.ts";

/**
 * The day the shipped window table was last checked: the Anthropic rows against Anthropic's
 * models overview (platform.claude.com/docs/en/about-claude/models/overview), the OpenAI rows
 * against OpenAI's model pages (platform.openai.com/docs/models). Re-check when a provider
 * releases a model or changes a window.
 */
export const CONTEXT_WINDOW_TABLE_DATE = "2026-12-02";

/**
 * The most input tokens one request may hold, by model id (dated snapshots such as
 * `-20250929` are looked up without their date). For OpenAI's GPT-5 models that is the
 * input limit (272,000 of the 400,000-token window; the rest is reserved for output), since
 * a request over it is refused however little it asks to write. Anthropic's 1M-token beta
 * for Sonnet 4 and 4.5 needs a header this project does not send, so they count as 200,000.
 */
const WINDOWS: Readonly<Record<string, number>> = Object.freeze({
  "claude-opus-5": 1_000_000,
  "claude-opus-4-8": 1_000_000,
  "claude-opus-4-7": 1_000_000,
  "claude-opus-4-6": 1_000_000,
  "claude-sonnet-4-6": 1_000_000,
  "claude-opus-4-5": 200_000,
  "claude-opus-4-1": 200_000,
  "claude-opus-4-0": 200_000,
  "claude-opus-4": 200_000,
  "claude-sonnet-4-5": 200_000,
  "claude-sonnet-4-0": 200_000,
  "claude-sonnet-4": 200_000,
  "claude-3-7-sonnet": 200_000,
  "claude-haiku-4-5": 200_000,
  "claude-3-5-haiku": 200_000,
  "claude-3-haiku": 200_000,
  "gpt-5.5": 922_000,
  "gpt-5.4": 922_000,
  "gpt-5.2": 272_000,
  "gpt-5.1": 272_000,
  "gpt-5": 272_000,
  "gpt-5-mini": 272_000,
  "gpt-5-nano": 272_000,
  "gpt-4.1": 1_047_576,
  "gpt-4.1-mini": 1_047_576,
  "gpt-4.1-nano": 1_047_576,
  "gpt-4o": 128_000,
  "gpt-4o-mini": 128_000,
  o3: 200_000,
  "o4-mini": 200_000,
});

/** The shipped window of `model` in tokens, or undefined when the table does not know it. */
export function shippedContextWindow(model: string): number | undefined {
  const base = baseModelId(model);
  return Object.hasOwn(WINDOWS, base) ? WINDOWS[base] : undefined;
}

/**
 * The window a pod compacts against: `provider.context_window` when the manifest sets it, else
 * the shipped table's; undefined when neither knows the model (then the pod never compacts on its own).
 */
export function contextWindowOf(
  provider: { readonly model?: string | undefined; readonly context_window?: number | undefined } | undefined,
): number | undefined {
  if (provider?.context_window !== undefined) return provider.context_window;
  return provider?.model === undefined ? undefined : shippedContextWindow(provider.model);
}
