import type { Message } from "@insomnia/worker";

/**
 * What a pod records with each model call, beside the assistant message it answered with:
 * enough of what was sent to tell later why the provider's cache was or was not reused.
 */
export interface CallRecord {
  /** RFC 3339 time the request was sent (when the turn started or the last message before it was logged). */
  readonly sentAt: string;
  /** The provider kind and model the pod was configured with, when it knew them. */
  readonly provider?: string | undefined;
  readonly model?: string | undefined;
  /** Cache lifetime the request asked for; absent is the provider's default (5 minutes). */
  readonly cacheTtl?: "5m" | "1h" | undefined;
  /** Hash of the system prompt sent. */
  readonly system: string;
  /** Hash of the tool definitions sent. */
  readonly tools: string;
  /** One hash per message sent, in order (what the usage and the answer came from). */
  readonly messages: readonly string[];
  /** Cost in USD with the prices in force when the call was logged; absent when a price was unknown. */
  readonly costUsd?: number | undefined;
}

/** A message record of the segment log, with the call record when the message is a model's answer. */
export interface CallMessageRecord {
  readonly type: "message";
  /** The message format (see `MESSAGE_FORMAT_VERSION`). */
  readonly version?: number;
  readonly message: Message;
  readonly call?: CallRecord | undefined;
}

const HASH_CHARS = 16;

/** A short hex digest: 64 bits, plenty to tell two requests of one conversation apart. */
export function shortHash(text: string): string {
  // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(text).digest("hex").slice(0, HASH_CHARS);
}

const messageHashes = new WeakMap<Message, string>();

/** The hash of a message as it is sent: its usage is the provider's answer, not part of the request. */
export function messageHash(message: Message): string {
  let hash = messageHashes.get(message);
  if (hash === undefined) {
    const { usage: _usage, ...sent } = message as Message & { usage?: unknown };
    hash = shortHash(JSON.stringify(sent));
    messageHashes.set(message, hash);
  }
  return hash;
}

/** True when `value` (a record's `call` read from a log) has the shape of a {@link CallRecord}. */
export function isCallRecord(value: unknown): value is CallRecord {
  if (typeof value !== "object" || value === null) return false;
  const call = value as Record<string, unknown>;
  return (
    typeof call.sentAt === "string" &&
    typeof call.system === "string" &&
    typeof call.tools === "string" &&
    Array.isArray(call.messages) &&
    call.messages.every((hash) => typeof hash === "string") &&
    (call.model === undefined || typeof call.model === "string") &&
    (call.provider === undefined || typeof call.provider === "string") &&
    (call.cacheTtl === undefined || call.cacheTtl === "5m" || call.cacheTtl === "1h") &&
    (call.costUsd === undefined || (typeof call.costUsd === "number" && Number.isFinite(call.costUsd)))
  );
}
