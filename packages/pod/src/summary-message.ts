import type { Message } from "@insomnia/worker";

/** The text that opens the message carrying a compaction summary. */
export const SUMMARY_PREFIX = "Summary of the conversation so far:\n";

/** The one message a compacted history starts with: a user message carrying the summary. */
export function summaryMessage(summary: string): Message {
  return { role: "user", content: `${SUMMARY_PREFIX}${summary}` };
}
