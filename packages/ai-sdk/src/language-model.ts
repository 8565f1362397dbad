import type { LanguageModelV2, LanguageModelV3 } from "@ai-sdk/provider";
import { AiSdkError } from "./ai-sdk-error.ts";

/**
 * A model `aiSdkClient` can call: a provider package's model object (`anthropic("claude-…")`,
 * language-model spec v3, or v2 from an older provider), or a bare model id, which needs
 * `globalThis.AI_SDK_DEFAULT_PROVIDER` to be set.
 */
export type AiSdkLanguageModel = LanguageModelV3 | LanguageModelV2 | string;

/** The model object the client calls; v2 and v3 differ only in what they answer, which the client reads either way. */
export type SpecModel = LanguageModelV3 | LanguageModelV2;

interface DefaultProvider {
  languageModel(id: string): unknown;
}

/** Checks the model and resolves a bare id through `globalThis.AI_SDK_DEFAULT_PROVIDER`. */
export function resolveModel(model: AiSdkLanguageModel): SpecModel {
  let resolved: unknown = model;
  if (typeof model === "string") {
    const provider = (globalThis as { AI_SDK_DEFAULT_PROVIDER?: DefaultProvider | undefined }).AI_SDK_DEFAULT_PROVIDER;
    if (provider === undefined) {
      throw new AiSdkError(
        "INVALID_ARGUMENT",
        `the model "${model}" is a bare id, and no default provider is set: pass a provider's model instead, e.g. anthropic("${model}") from @ai-sdk/anthropic, or set globalThis.AI_SDK_DEFAULT_PROVIDER`,
      );
    }
    resolved = provider.languageModel(model);
  }
  const spec = resolved as Partial<SpecModel> | null;
  if (
    typeof spec !== "object" ||
    spec === null ||
    (spec.specificationVersion !== "v3" && spec.specificationVersion !== "v2") ||
    typeof spec.doGenerate !== "function" ||
    typeof spec.doStream !== "function"
  ) {
    const version = typeof spec === "object" && spec !== null ? String(spec.specificationVersion) : typeof spec;
    throw new AiSdkError(
      "INVALID_ARGUMENT",
      `the model is not an AI SDK language model of specification v2 or v3 (got ${version}); use a provider package of the AI SDK 6 line, e.g. @ai-sdk/anthropic@^3`,
    );
  }
  return spec as SpecModel;
}
