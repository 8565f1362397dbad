// The AI SDK's global warning switch, which `ai` declares; this package no longer depends on
// `ai`, so its tests declare what they set.
declare var AI_SDK_LOG_WARNINGS: ((options: unknown) => void) | false | undefined;
