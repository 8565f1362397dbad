/**
 * Prices of one model in USD per million tokens. A price that is not known is absent, and a
 * cost that needs it is unknown: never counted as 0.
 */
export interface ModelPrice {
  readonly input?: number | undefined;
  readonly output?: number | undefined;
  /** Input tokens read from the prompt cache. */
  readonly cacheRead?: number | undefined;
  /** Input tokens written to the prompt cache with the default (5-minute) lifetime. */
  readonly cacheWrite?: number | undefined;
  /** Input tokens written to the prompt cache with a 1-hour lifetime, where the provider has it. */
  readonly cacheWrite1h?: number | undefined;
  /**
   * The largest prompt (input tokens, cached ones included) these prices hold for; a longer
   * prompt is billed at long-context rates the table does not carry, so its cost is unknown.
   */
  readonly maxInputTokens?: number | undefined;
}

/**
 * The day the shipped table was last checked: the Anthropic rows against Anthropic's pricing page
 * (platform.claude.com/docs/en/about-claude/pricing). The OpenAI rows are OpenAI's standard-tier
 * list prices (developers.openai.com/api/docs/pricing); that page itself could not be read when
 * they were re-checked, so each row was checked against at least two dated copies of it (2025-06
 * to 2026-11) that agree. Re-check both when a provider changes prices.
 */
export const PRICE_TABLE_DATE = "2026-12-02";

// Anthropic: cache writes cost 1.25× input for 5 minutes and 2× for 1 hour, reads 0.1×.
const anthropic = (input: number, output: number, cacheWrite: number, cacheWrite1h: number, cacheRead: number) =>
  Object.freeze({ input, output, cacheRead, cacheWrite, cacheWrite1h });
// OpenAI caches automatically and bills the tokens it writes as ordinary input.
const openai = (input: number, cacheRead: number, output: number) =>
  Object.freeze({ input, output, cacheRead, cacheWrite: input });

const OPUS_4_5 = anthropic(5, 25, 6.25, 10, 0.5);
const OPUS_4 = anthropic(15, 75, 18.75, 30, 1.5);
const SONNET = anthropic(3, 15, 3.75, 6, 0.3);
// Sonnet 4 and 4.5 bill prompts over 200K tokens (their 1M-token context) at long-context rates.
const SONNET_200K = Object.freeze({ ...SONNET, maxInputTokens: 200_000 });
// GPT-5.4 and 5.5 bill prompts over 272K tokens (of their 1M-token context) at long-context rates.
const openai272k = (input: number, cacheRead: number, output: number) =>
  Object.freeze({ ...openai(input, cacheRead, output), maxInputTokens: 272_000 });

/** The shipped prices by model id (dated snapshots such as `-20250929` are looked up without their date). */
const PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  "claude-opus-5": OPUS_4_5,
  "claude-opus-4-8": OPUS_4_5,
  "claude-opus-4-7": OPUS_4_5,
  "claude-opus-4-6": OPUS_4_5,
  "claude-opus-4-5": OPUS_4_5,
  "claude-opus-4-1": OPUS_4,
  "claude-opus-4-0": OPUS_4,
  "claude-opus-4": OPUS_4,
  "claude-sonnet-4-6": SONNET,
  "claude-sonnet-4-5": SONNET_200K,
  "claude-sonnet-4-0": SONNET_200K,
  "claude-sonnet-4": SONNET_200K,
  "claude-3-7-sonnet": SONNET,
  "claude-haiku-4-5": anthropic(1, 5, 1.25, 2, 0.1),
  "claude-3-5-haiku": anthropic(0.8, 4, 1, 1.6, 0.08),
  "claude-3-haiku": anthropic(0.25, 1.25, 0.3, 0.5, 0.03),
  "gpt-5.5": openai272k(5, 0.5, 30),
  "gpt-5.4": openai272k(2.5, 0.25, 15),
  "gpt-5.4-mini": openai(0.75, 0.075, 4.5),
  "gpt-5.4-nano": openai(0.2, 0.02, 1.25),
  "gpt-5.2": openai(1.75, 0.175, 14),
  "gpt-5.1": openai(1.25, 0.125, 10),
  "gpt-5": openai(1.25, 0.125, 10),
  "gpt-5-mini": openai(0.25, 0.025, 2),
  "gpt-5-nano": openai(0.05, 0.005, 0.4),
  "gpt-4.1": openai(2, 0.5, 8),
  "gpt-4.1-mini": openai(0.4, 0.1, 1.6),
  "gpt-4.1-nano": openai(0.1, 0.025, 0.4),
  "gpt-4o": openai(2.5, 1.25, 10),
  "gpt-4o-mini": openai(0.15, 0.075, 0.6),
  o3: openai(2, 0.5, 8),
  "o4-mini": openai(1.1, 0.275, 4.4),
});

/**
 * Smallest prompt (tokens) each Anthropic model caches; shorter prompts are sent uncached.
 * Models not listed here have no known minimum, and no call of theirs is judged `below-minimum`.
 */
const ANTHROPIC_MINIMUM: Readonly<Record<string, number>> = Object.freeze({
  "claude-opus-4-5": 4096,
  "claude-haiku-4-5": 4096,
  "claude-opus-4-1": 1024,
  "claude-opus-4-0": 1024,
  "claude-opus-4": 1024,
  "claude-sonnet-4-5": 1024,
  "claude-sonnet-4-0": 1024,
  "claude-sonnet-4": 1024,
  "claude-3-7-sonnet": 1024,
  "claude-3-5-haiku": 2048,
  "claude-3-haiku": 2048,
});

/** OpenAI caches prompts of 1024 tokens and more, for every model that caches. */
const OPENAI_MINIMUM = 1024;

/** The id without a trailing snapshot date (`-20250929`, `-2025-08-07`) or `-latest`. */
export function baseModelId(model: string): string {
  return model.replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "");
}

/** The shipped price of `model`, or undefined when the table does not know it. */
export function shippedPrice(model: string): ModelPrice | undefined {
  const base = baseModelId(model);
  return Object.hasOwn(PRICES, base) ? PRICES[base] : undefined;
}

/** The provider's smallest cacheable prompt for `model` in tokens, or undefined when not known. */
export function minimumCacheablePrompt(model: string): number | undefined {
  const base = baseModelId(model);
  if (Object.hasOwn(ANTHROPIC_MINIMUM, base)) return ANTHROPIC_MINIMUM[base];
  return /^(?:gpt-|o\d)/.test(base) && Object.hasOwn(PRICES, base) ? OPENAI_MINIMUM : undefined;
}
