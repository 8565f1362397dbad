import type { Message, ToolDefinition } from "@insomnia/worker";
import type { ModelMessage, SystemModelMessage, ToolSet } from "ai";
import { jsonSchema, tool } from "ai";

/** Which prompt-cache hints a request carries. */
export type CacheStyle = "anthropic" | "openai" | "none";

/** The style that fits a model's provider id (`anthropic.messages`, `openai.responses`, …). */
export function cacheStyleOf(provider: string): CacheStyle {
  if (provider.startsWith("anthropic") || provider.includes(".anthropic")) return "anthropic";
  if (provider.startsWith("openai.")) return "openai";
  return "none";
}

type ProviderOptions = NonNullable<SystemModelMessage["providerOptions"]>;

const ANTHROPIC_BREAKPOINT: ProviderOptions = { anthropic: { cacheControl: { type: "ephemeral" } } };

/** The system prompt, untouched; for Anthropic it carries the first cache breakpoint. */
export function systemMessage(prompt: string, style: CacheStyle): SystemModelMessage {
  return style === "anthropic"
    ? { role: "system", content: prompt, providerOptions: ANTHROPIC_BREAKPOINT }
    : { role: "system", content: prompt };
}

/**
 * Our history as AI SDK messages, one for one, oldest first. For Anthropic the last message
 * carries the second breakpoint (system + last message: 2 of Anthropic's 4), so the next
 * request, which only appends, reads the whole conversation so far from the cache.
 */
export function modelMessages(messages: readonly Message[], style: CacheStyle): ModelMessage[] {
  const out = messages.map(modelMessage);
  const last = out.at(-1);
  if (style === "anthropic" && last !== undefined)
    out[out.length - 1] = { ...last, providerOptions: ANTHROPIC_BREAKPOINT };
  return out;
}

function modelMessage(message: Message): ModelMessage {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: message.content }] };
    case "assistant": {
      const calls = (message.toolCalls ?? []).map((call) => ({
        type: "tool-call" as const,
        toolCallId: call.id,
        toolName: call.name,
        input: call.input,
      }));
      // An assistant turn that only called tools has no text part: an empty text block is refused by Anthropic.
      const text = message.content === "" && calls.length > 0 ? [] : [{ type: "text" as const, text: message.content }];
      return { role: "assistant", content: [...text, ...calls] };
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
                : { type: "text", value: message.content },
          },
        ],
      };
  }
}

/** Tool definitions as an AI SDK tool set, inserted in name order (no `execute`: the worker runs tools). */
export function modelTools(definitions: readonly ToolDefinition[]): ToolSet | undefined {
  if (definitions.length === 0) return undefined;
  const sorted = [...definitions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const tools: ToolSet = {};
  for (const definition of sorted) {
    tools[definition.name] = tool({
      description: definition.description,
      inputSchema: jsonSchema(structuredClone(definition.inputSchema) as Parameters<typeof jsonSchema>[0]),
    });
  }
  return tools;
}
