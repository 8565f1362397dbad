/** Name of the encoding token counts are given in. */
export const TOKENIZER = "o200k_base";

/** Counts tokens of a text. */
export type TokenCounter = (text: string) => number;

/** Loads the o200k_base tokenizer (a few MB of tables), so only --explain and --json pay for it. */
export async function loadTokenCounter(): Promise<TokenCounter> {
  const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base");
  // Prompt text is data: "<|endoftext|>" in an AGENTS.md is counted as text, not refused.
  const options = { disallowedSpecial: new Set<string>() };
  return (text) => countTokens(text, options);
}
