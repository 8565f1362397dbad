// The provider packages are devDependencies of @insomnia/ai-sdk, used by its tests only;
// they are imported here, in a fixture, so the package's own sources never name one.
export { createAnthropic } from "@ai-sdk/anthropic";
export { createOpenAI } from "@ai-sdk/openai";
export { createOpenAICompatible } from "@ai-sdk/openai-compatible";
