import type {
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type { Message, ToolDefinition } from "@insomnia/worker";

/** Which prompt-cache hints a request carries. */
export type CacheStyle = "anthropic" | "openai" | "none";

/** The style that fits a model's provider id (`anthropic.messages`, `openai.responses`, …). */
export function cacheStyleOf(provider: string): CacheStyle {
  if (provider.startsWith("anthropic") || provider.includes(".anthropic")) return "anthropic";
  if (provider.startsWith("openai.")) return "openai";
  return "none";
}

const ANTHROPIC_BREAKPOINT: SharedV3ProviderOptions = { anthropic: { cacheControl: { type: "ephemeral" } } };

/**
 * The request's prompt in the language-model spec's own format (what a provider's `doGenerate`
 * takes), built straight from our messages: the system prompt first and untouched, then the
 * history one for one, oldest first (consecutive tool results share one tool message, as the
 * spec wants). For Anthropic the system message carries the first cache breakpoint and the
 * last message the second (2 of Anthropic's 4), so the next request, which only appends, reads
 * the whole conversation so far from the cache.
 */
export function modelPrompt(
  systemPrompt: string,
  messages: readonly Message[],
  style: CacheStyle,
  kind = "",
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [
    style === "anthropic"
      ? { role: "system", content: systemPrompt, providerOptions: ANTHROPIC_BREAKPOINT }
      : { role: "system", content: systemPrompt },
  ];
  for (const message of messages) {
    const next = modelMessage(message, kind);
    const last = prompt[prompt.length - 1];
    if (next.role === "tool" && last?.role === "tool") last.content.push(...next.content);
    else prompt.push(next);
  }
  const last = prompt[prompt.length - 1];
  if (style === "anthropic" && last !== undefined && prompt.length > 1) last.providerOptions = ANTHROPIC_BREAKPOINT;
  return prompt;
}

/** The provider kind of a model's provider id: `anthropic.messages` → `anthropic`, `openai.responses` → `openai`. */
export function providerKind(provider: string): string {
  return provider.split(".")[0] ?? provider;
}

/**
 * One message in the spec's format. Images go as base64 file parts, the stored string as it is;
 * reasoning goes back, with the provider's data as its options, only to the kind that wrote it.
 */
function modelMessage(message: Message, kind: string): LanguageModelV3Message {
  switch (message.role) {
    case "user": {
      const content: Extract<LanguageModelV3Message, { role: "user" }>["content"] = [];
      // An empty text part is left out (the AI SDK's generateText did the same).
      if (message.content !== "") content.push({ type: "text", text: message.content });
      for (const image of message.images ?? []) {
        content.push({ type: "file", mediaType: image.mediaType, data: image.data });
      }
      return { role: "user", content };
    }
    case "assistant": {
      const content: Extract<LanguageModelV3Message, { role: "assistant" }>["content"] = [];
      for (const part of message.reasoning ?? []) {
        if (part.provider !== kind) continue;
        content.push({
          type: "reasoning",
          text: part.text,
          ...(part.data === undefined ? {} : { providerOptions: part.data as SharedV3ProviderOptions }),
        });
      }
      // An assistant turn that only called tools has no text part: an empty text block is refused by Anthropic.
      if (message.content !== "") content.push({ type: "text", text: message.content });
      for (const call of message.toolCalls ?? []) {
        content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.input });
      }
      return { role: "assistant", content };
    }
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId,
            toolName: message.name,
            output:
              message.isError === true
                ? { type: "error-text", value: message.content }
                : message.images === undefined
                  ? { type: "text", value: message.content }
                  : {
                      type: "content",
                      value: [
                        { type: "text", text: message.content },
                        ...message.images.map((image) => ({
                          type: "image-data" as const,
                          data: image.data,
                          mediaType: image.mediaType,
                        })),
                      ],
                    },
          },
        ],
      };
  }
}

/** Converted definitions that cannot change (the worker deep-freezes what it registers), reused across calls. */
const frozenTools = new WeakMap<ToolDefinition, LanguageModelV3FunctionTool>();

/**
 * Converted definitions that could change, with the JSON text of the schema they were copied
 * from: reused while the definition's schema still reads as that text (a `JSON.stringify` per
 * call, some ten times cheaper than a `structuredClone`), copied anew when it changed.
 */
const copiedTools = new WeakMap<
  ToolDefinition,
  { readonly json: string; readonly tool: LanguageModelV3FunctionTool }
>();

const freezeEach = (_key: string, value: unknown): unknown =>
  typeof value === "object" && value !== null ? Object.freeze(value) : value;

function modelTool(definition: ToolDefinition): LanguageModelV3FunctionTool {
  const cached = frozenTools.get(definition);
  if (cached !== undefined) return cached;
  if (Object.isFrozen(definition) && Object.isFrozen(definition.inputSchema)) {
    // A frozen schema is handed on as it is.
    const tool = Object.freeze(functionTool(definition, definition.inputSchema));
    frozenTools.set(definition, tool);
    return tool;
  }
  // Any other is copied, so a later change to it cannot reach a request in flight. The copy is
  // the schema's JSON, which is all of it that reaches the wire.
  let json: string | undefined;
  try {
    json = JSON.stringify(definition.inputSchema);
  } catch {
    json = undefined;
  }
  // Not JSON (a cycle, a BigInt): copied as before; the provider reports what it cannot send.
  if (json === undefined) return functionTool(definition, structuredClone(definition.inputSchema));
  const copied = copiedTools.get(definition);
  if (
    copied !== undefined &&
    copied.json === json &&
    copied.tool.name === definition.name &&
    copied.tool.description === definition.description
  ) {
    return copied.tool;
  }
  const tool = Object.freeze(functionTool(definition, JSON.parse(json, freezeEach)));
  copiedTools.set(definition, { json, tool });
  return tool;
}

function functionTool(definition: ToolDefinition, inputSchema: unknown): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: definition.name,
    description: definition.description,
    inputSchema: inputSchema as LanguageModelV3FunctionTool["inputSchema"],
  };
}

/** Tool definitions as the spec's function tools, sorted by name (the worker runs them, never the SDK). */
export function modelTools(definitions: readonly ToolDefinition[]): LanguageModelV3FunctionTool[] | undefined {
  if (definitions.length === 0) return undefined;
  const sorted = [...definitions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sorted.map(modelTool);
}
