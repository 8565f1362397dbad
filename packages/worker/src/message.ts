import type { ImagePart, ReasoningPart } from "./content-parts.ts";
import { normalizeImages, normalizeReasoning } from "./content-parts.ts";
import { deepFreeze } from "./deep-freeze.ts";

/** A tool invocation requested by the model. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** A message from the user: text, images when there are any, and the id of the turn it opened when the caller gave one. */
export interface UserMessage {
  readonly role: "user";
  readonly content: string;
  readonly images?: readonly ImagePart[] | undefined;
  /** The `turnId` of the run() that sent it, so a retried run() finds it instead of sending it again. */
  readonly turnId?: string | undefined;
}

/**
 * Tokens one model call used, each absent when the provider did not report it.
 * `inputTokens` counts the whole input, cached parts included.
 */
export interface LlmUsage {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  /** Input tokens read from the provider's prompt cache. */
  readonly cacheReadTokens?: number | undefined;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheWriteTokens?: number | undefined;
}

/**
 * A message from the model; `toolCalls` is absent when the model requested none, `usage` when
 * unknown, `reasoning` when the model gave none. `interrupted` marks the text of a model call
 * that was aborted: what had arrived, kept and sent in later requests as it is.
 */
export interface AssistantMessage {
  readonly role: "assistant";
  readonly content: string;
  readonly reasoning?: readonly ReasoningPart[] | undefined;
  readonly toolCalls?: readonly ToolCall[] | undefined;
  readonly usage?: LlmUsage | undefined;
  readonly interrupted?: true | undefined;
}

/** The result of one tool call; `isError` is present (and true) only for failures. */
export interface ToolMessage {
  readonly role: "tool";
  readonly toolCallId: string;
  readonly name: string;
  readonly content: string;
  /** Images the tool returned along with its text. */
  readonly images?: readonly ImagePart[] | undefined;
  readonly isError?: boolean | undefined;
}

/** One entry of the conversation history. */
export type Message = UserMessage | AssistantMessage | ToolMessage;

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Checks the shape of a tool call list (undefined allowed) and returns a fresh frozen
 * copy, or a sentence saying what is wrong. An empty list counts as no tool calls.
 */
export function normalizeToolCalls(value: unknown): readonly ToolCall[] | undefined | string {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return `toolCalls must be an array, got ${describe(value)}`;
  const calls: ToolCall[] = [];
  for (const [i, call] of value.entries()) {
    if (!isObject(call)) return `toolCalls[${i}] must be an object, got ${describe(call)}`;
    if (typeof call.id !== "string") return `toolCalls[${i}].id must be a string, got ${describe(call.id)}`;
    if (typeof call.name !== "string") return `toolCalls[${i}].name must be a string, got ${describe(call.name)}`;
    let input: unknown;
    try {
      input = structuredClone(call.input);
    } catch {
      return `toolCalls[${i}].input must be plain data (it could not be cloned)`;
    }
    calls.push({ id: call.id, name: call.name, input });
  }
  return calls.length === 0 ? undefined : deepFreeze(calls);
}

const USAGE_FIELDS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"] as const;

/**
 * Checks a usage object (undefined allowed) and returns a fresh frozen copy holding only
 * the known fields, or a sentence saying what is wrong. An object with no field counts as none.
 */
export function normalizeUsage(value: unknown): LlmUsage | undefined | string {
  if (value === undefined) return undefined;
  if (!isObject(value)) return `usage must be an object, got ${describe(value)}`;
  const usage: Record<string, number> = {};
  for (const field of USAGE_FIELDS) {
    const count = value[field];
    if (count === undefined) continue;
    if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
      return `usage.${field} must be a whole number of tokens (0 or more), got ${typeof count === "number" ? String(count) : describe(count)}`;
    }
    usage[field] = count;
  }
  return Object.keys(usage).length === 0 ? undefined : Object.freeze(usage);
}

/** An assistant message from checked parts: absent parts are left out, not set to undefined. */
export function assistantMessage(
  content: string,
  toolCalls: readonly ToolCall[] | undefined,
  usage: LlmUsage | undefined,
  extra: { reasoning?: readonly ReasoningPart[] | undefined; interrupted?: boolean | undefined } = {},
): AssistantMessage {
  return Object.freeze({
    role: "assistant",
    content,
    ...(extra.reasoning === undefined ? {} : { reasoning: extra.reasoning }),
    ...(toolCalls === undefined ? {} : { toolCalls }),
    ...(usage === undefined ? {} : { usage }),
    ...(extra.interrupted === true ? { interrupted: true as const } : {}),
  });
}

/**
 * Checks the shape of a message and returns a fresh deep-frozen copy holding only the
 * known fields, or a sentence saying what is wrong.
 */
export function normalizeMessage(value: unknown): Message | string {
  if (!isObject(value)) return `a message must be an object, got ${describe(value)}`;
  if (typeof value.content !== "string") return `content must be a string, got ${describe(value.content)}`;
  const content = value.content;
  switch (value.role) {
    case "user": {
      const images = normalizeImages(value.images, "images");
      if (typeof images === "string") return images;
      if (value.turnId !== undefined && typeof value.turnId !== "string") {
        return `turnId must be a string when present, got ${describe(value.turnId)}`;
      }
      return Object.freeze({
        role: "user",
        content,
        ...(images === undefined ? {} : { images }),
        ...(value.turnId === undefined ? {} : { turnId: value.turnId }),
      });
    }
    case "assistant": {
      const toolCalls = normalizeToolCalls(value.toolCalls);
      if (typeof toolCalls === "string") return toolCalls;
      const usage = normalizeUsage(value.usage);
      if (typeof usage === "string") return usage;
      const reasoning = normalizeReasoning(value.reasoning);
      if (typeof reasoning === "string") return reasoning;
      if (value.interrupted !== undefined && value.interrupted !== true) {
        return `interrupted must be true when present, got ${describe(value.interrupted)}`;
      }
      return assistantMessage(content, toolCalls, usage, { reasoning, interrupted: value.interrupted === true });
    }
    case "tool": {
      if (typeof value.toolCallId !== "string") return `toolCallId must be a string, got ${describe(value.toolCallId)}`;
      if (typeof value.name !== "string") return `name must be a string, got ${describe(value.name)}`;
      if (value.isError !== undefined && typeof value.isError !== "boolean") {
        return `isError must be a boolean when present, got ${describe(value.isError)}`;
      }
      const images = normalizeImages(value.images, "images");
      if (typeof images === "string") return images;
      const base = {
        role: "tool",
        toolCallId: value.toolCallId,
        name: value.name,
        content,
        ...(images === undefined ? {} : { images }),
      } as const;
      return Object.freeze(value.isError === true ? { ...base, isError: true } : base);
    }
    default:
      return `role must be "user", "assistant" or "tool", got ${typeof value.role === "string" ? JSON.stringify(value.role) : describe(value.role)}`;
  }
}
