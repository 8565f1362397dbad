export { BUILTIN_PROMPTS_DIR } from "./builtin-prompts-dir.ts";
export { promptFileSha256 } from "./decode-prompt-text.ts";
export {
  DEFAULT_MAX_BYTES,
  PromptLoader,
  type LoadedPrompt,
  type PodPromptOptions,
  type PromptLoaderOptions,
} from "./prompt-loader.ts";
export { PromptLoaderError, type PromptLoaderErrorCode, type PromptLoaderErrorOptions } from "./prompt-loader-error.ts";
export {
  MAX_REF_LENGTH,
  MAX_REF_SEGMENTS,
  PROMPT_PREFIXES,
  parseRef,
  type PromptPrefix,
  type PromptRef,
} from "./prompt-ref.ts";
export { sha256Hex } from "./sha256.ts";
