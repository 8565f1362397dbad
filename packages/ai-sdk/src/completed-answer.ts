import type {
  JSONValue,
  LanguageModelV2Usage,
  LanguageModelV3Content,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from "@ai-sdk/provider";
import type { LlmUsage, ReasoningPart } from "@insomnia/worker";

/**
 * A provider's usage in the specification's terms (v3 broken down, v2 flat) as the worker keeps
 * it: each count only when the provider reported it.
 */
export function specUsage(usage: LanguageModelV3Usage | LanguageModelV2Usage | undefined): LlmUsage | undefined {
  if (usage === undefined || usage === null) return undefined;
  const out: Record<string, number> = {};
  const put = (field: keyof LlmUsage, value: number | undefined): void => {
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) out[field] = value;
  };
  if (typeof usage.inputTokens === "object" || typeof usage.outputTokens === "object") {
    const v3 = usage as LanguageModelV3Usage;
    put("inputTokens", v3.inputTokens?.total);
    put("outputTokens", v3.outputTokens?.total);
    put("cacheReadTokens", v3.inputTokens?.cacheRead);
    put("cacheWriteTokens", v3.inputTokens?.cacheWrite);
  } else {
    const v2 = usage as LanguageModelV2Usage;
    put("inputTokens", v2.inputTokens);
    put("outputTokens", v2.outputTokens);
    put("cacheReadTokens", v2.cachedInputTokens);
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** A tool call's input as the worker gets it: parsed JSON, `{}` for none, the text itself when it is not JSON. */
function toolInput(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) ?? {};
  } catch {
    return text;
  }
}

/** Merges provider metadata by provider key, later fields over earlier ones. */
export function mergeMetadata(
  into: Record<string, Record<string, JSONValue>>,
  from: SharedV3ProviderMetadata | undefined,
): void {
  if (from === undefined || from === null) return;
  for (const [key, fields] of Object.entries(from)) {
    if (typeof fields === "object" && fields !== null)
      into[key] = { ...(into[key] ?? {}), ...(fields as Record<string, JSONValue>) };
  }
}

/** What one answer holds, read from the provider's content (a completed call) or `streamText`'s parts. */
export interface AnswerParts {
  text: string;
  calls: { toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean | undefined }[];
  reasoning: ReasoningPart[];
}

/** A completed call's content (the provider model's `doGenerate`): text, tool calls with their input parsed, reasoning. */
export function completedParts(content: readonly LanguageModelV3Content[], kind: string): AnswerParts {
  const parts: AnswerParts = { text: "", calls: [], reasoning: [] };
  for (const part of content) {
    if (part.type === "text") parts.text += part.text;
    else if (part.type === "tool-call") {
      parts.calls.push({
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: toolInput(part.input),
        providerExecuted: part.providerExecuted,
      });
    } else if (part.type === "reasoning") {
      const data: Record<string, Record<string, JSONValue>> = {};
      mergeMetadata(data, part.providerMetadata);
      parts.reasoning.push({ text: part.text, provider: kind, ...(Object.keys(data).length === 0 ? {} : { data }) });
    }
  }
  return parts;
}
