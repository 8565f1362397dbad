import { didYouMeanSuffix } from "@insomnia/errors";
import { splitForCompaction } from "@insomnia/pod";
import type { CompactionMark, SegmentRecord, SegmentStartRecord, SegmentStore } from "@insomnia/pod";
import type { Message } from "@insomnia/worker";
import { CliError } from "./cli-error.ts";

/**
 * One conversation of a pod: a chain of segments, each after the first continuing the one
 * before it (compaction). Its id is its first segment's id, which compaction never changes;
 * `head` is the segment a new turn appends to.
 */
export interface ConversationInfo {
  id: string;
  /** The newest segment of the chain: where `pod run --conversation` continues. */
  head: string;
  /** Segment ids, oldest first. */
  segments: string[];
  /** When the first segment was started. */
  createdAt: string;
  /** User messages in the whole chain (a compaction summary is not counted). */
  userMessages: number;
  /** The first user message of the conversation, as typed. */
  firstMessage?: string;
  /** True for the conversation `pod run` continues without `--conversation`. */
  latest: boolean;
}

interface SegmentInfo {
  id: string;
  start: SegmentStartRecord;
  records: readonly SegmentRecord[];
}

/** Reads every segment of `store` once; `onWarning` gets the store's read warnings (a recovered tail). */
async function readSegments(
  store: SegmentStore,
  onWarning: (warning: { code: string; message: string; file?: string }) => void,
): Promise<Map<string, SegmentInfo>> {
  const segments = new Map<string, SegmentInfo>();
  for (const id of await store.listSegments()) {
    const { records, warnings } = await store.readSegment(id);
    for (const warning of warnings) onWarning(warning);
    const start = records[0];
    if (start?.type === "segment_start") segments.set(id, { id, start, records });
  }
  return segments;
}

/** Every conversation of the pod whose log is `store`, oldest first. */
export async function listConversations(
  store: SegmentStore,
  onWarning: (warning: { code: string; message: string; file?: string }) => void,
): Promise<ConversationInfo[]> {
  const segments = await readSegments(store, onWarning);
  const latest = await store.latestSegment();
  const continued = new Set<string>();
  for (const { start } of segments.values()) {
    if (start.previousSegment !== undefined && segments.has(start.previousSegment))
      continued.add(start.previousSegment);
  }
  const conversations: ConversationInfo[] = [];
  for (const head of segments.keys()) {
    if (continued.has(head)) continue;
    const chain: SegmentInfo[] = [];
    for (let at = segments.get(head); at !== undefined && !chain.includes(at); ) {
      chain.unshift(at);
      at = at.start.previousSegment === undefined ? undefined : segments.get(at.start.previousSegment);
    }
    const first = chain[0]!;
    const typed = typedMessages(chain);
    conversations.push({
      id: first.id,
      head,
      segments: chain.map((segment) => segment.id),
      createdAt: first.start.createdAt,
      userMessages: typed.length,
      ...(typed[0] === undefined ? {} : { firstMessage: typed[0] }),
      latest: head === latest,
    });
  }
  return conversations.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The mark of a compaction's summary-call record (a message record with `compaction` set); undefined for any other record. */
export function compactionMarkOf(record: SegmentRecord): CompactionMark | undefined {
  const mark = (record as { compaction?: unknown }).compaction;
  return typeof mark === "object" && mark !== null ? (mark as CompactionMark) : undefined;
}

/**
 * What the user typed in a chain of segments, each message once. A compacted segment starts with
 * copies of the turn in progress (the summary itself is in its start record, not a message).
 */
function typedMessages(chain: readonly SegmentInfo[]): string[] {
  const typed: string[] = [];
  let copies = 0;
  for (const segment of chain) {
    const messages = segment.records
      .slice(1)
      .flatMap((record) =>
        record.type === "message" && compactionMarkOf(record) === undefined ? [record.message as Message] : [],
      );
    for (const message of messages.slice(copies)) {
      if (message.role === "user" && typeof message.content === "string") typed.push(message.content);
    }
    // The segment closed at its applied compaction: what the next one repeats is kept from here.
    copies = splitForCompaction(messages).kept.length;
  }
  return typed;
}

/**
 * The conversation `id` names: its id (its first segment) or any of its segments' ids, so an id
 * copied from `pod log` output always works. Unknown: `UNKNOWN_CONVERSATION`, with did-you-mean.
 */
export async function findConversation(
  store: SegmentStore,
  id: string,
  location: string,
  onWarning: (warning: { code: string; message: string; file?: string }) => void,
): Promise<ConversationInfo> {
  const conversations = await listConversations(store, onWarning);
  const found = conversations.find((c) => c.segments.includes(id));
  if (found !== undefined) return found;
  const ids = conversations.map((c) => c.id);
  throw new CliError(
    "UNKNOWN_CONVERSATION",
    `no conversation "${id}" in ${location}${didYouMeanSuffix(id, ids)}; pod log --list shows them${ids.length === 0 ? " (there are none yet)" : ""}`,
    { file: location },
  );
}

/** The `pod log --list` text: one line per conversation, newest last, the one `pod run` continues marked. */
export function conversationListText(conversations: readonly ConversationInfo[]): string {
  return conversations
    .map((c) => {
      const first = c.firstMessage === undefined ? "" : `  ${preview(c.firstMessage)}`;
      const count = `${c.userMessages} message${c.userMessages === 1 ? "" : "s"}`;
      const segments = c.segments.length === 1 ? "" : `, ${c.segments.length} segments`;
      return `${c.latest ? "*" : " "} ${c.id}  ${c.createdAt}  ${count}${segments}${first}\n`;
    })
    .join("");
}

function preview(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}
