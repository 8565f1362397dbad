// Stands in for `@ai-sdk/anthropic` in the README's example: its `anthropic` is the provider
// the test put on globalThis, pointed at the local fake server.
import type { createAnthropic } from "./models.ts";

type Provider = ReturnType<typeof createAnthropic>;

export const anthropic = (modelId: string): ReturnType<Provider> =>
  (globalThis as unknown as { readmeAnthropic: Provider }).readmeAnthropic(modelId);
