// The AI SDK's globals, which `ai` declares; this package no longer depends on `ai`, so its
// tests declare what they set.
declare var AI_SDK_LOG_WARNINGS: ((options: unknown) => void) | false | undefined;
declare var AI_SDK_DEFAULT_PROVIDER: { languageModel(id: string): unknown } | undefined;
