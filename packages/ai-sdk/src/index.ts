export { aiSdkClient } from "./ai-sdk-client.ts";
export type { AiSdkClientOptions, AiSdkWarning } from "./ai-sdk-client.ts";
export { AiSdkError } from "./ai-sdk-error.ts";
export type { AiSdkErrorCode, AiSdkErrorOptions } from "./ai-sdk-error.ts";
export type { AiSdkLanguageModel } from "./language-model.ts";
export { cacheStyleOf } from "./model-messages.ts";
export type { CacheStyle } from "./model-messages.ts";
export { DEFAULT_MAX_RETRIES } from "./retry.ts";
export type { RetryDelay } from "./retry.ts";
