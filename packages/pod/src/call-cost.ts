import type { LlmUsage } from "@insomnia/worker";
import type { ModelPrice } from "./price-table.ts";
import { shippedPrice } from "./price-table.ts";

/** `provider.pricing` as the manifest writes it: USD per million tokens. */
export interface PricingOverride {
  readonly input?: number | undefined;
  readonly output?: number | undefined;
  readonly cache_read?: number | undefined;
  readonly cache_write?: number | undefined;
}

/**
 * The price of `model`: the manifest's `provider.pricing` when given (it replaces the whole
 * entry: a price it leaves out is unknown), else the shipped table's.
 */
export function priceOf(model: string | undefined, override?: PricingOverride): ModelPrice | undefined {
  if (override !== undefined) {
    return {
      input: override.input,
      output: override.output,
      cacheRead: override.cache_read,
      cacheWrite: override.cache_write,
      cacheWrite1h: override.cache_write,
    };
  }
  return model === undefined ? undefined : shippedPrice(model);
}

/** Tokens × USD per million, or undefined when tokens were spent at an unknown price. */
function part(tokens: number, perMillion: number | undefined): number | undefined {
  if (tokens === 0) return 0;
  return perMillion === undefined ? undefined : (tokens * perMillion) / 1_000_000;
}

/**
 * What one model call cost in USD, unrounded; undefined when the usage or a price it needs is
 * unknown. `inputTokens` includes the cached tokens, which are priced at their own rates.
 */
export function callCost(
  usage: LlmUsage | undefined,
  price: ModelPrice | undefined,
  cacheTtl?: "5m" | "1h",
): number | undefined {
  if (usage?.inputTokens === undefined || usage.outputTokens === undefined || price === undefined) return undefined;
  if (price.maxInputTokens !== undefined && usage.inputTokens > price.maxInputTokens) return undefined;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const parts = [
    part(uncached, price.input),
    part(cacheRead, price.cacheRead),
    part(cacheWrite, cacheTtl === "1h" ? price.cacheWrite1h : price.cacheWrite),
    part(usage.outputTokens, price.output),
  ];
  let total = 0;
  for (const cost of parts) {
    if (cost === undefined) return undefined;
    total += cost;
  }
  return total;
}
