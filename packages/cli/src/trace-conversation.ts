import type { SegmentStore } from "@insomnia/pod";

/**
 * The conversation a segment belongs to, as `pod log` names it: the first segment of its
 * chain (compaction starts a new segment pointing back to the previous one, never changing
 * this id). Read only when spans are exported, for their `gen_ai.conversation.id`.
 */
export async function conversationRoot(store: SegmentStore, segmentId: string): Promise<string> {
  const seen = new Set<string>();
  const existing = new Set(await store.listSegments());
  let id = segmentId;
  for (;;) {
    seen.add(id);
    const { records } = await store.readSegment(id);
    const start = records[0];
    const previous = start?.type === "segment_start" ? start.previousSegment : undefined;
    // A chain that points at a missing segment (or, broken, at itself) ends where it can be followed.
    if (previous === undefined || seen.has(previous) || !existing.has(previous)) return id;
    id = previous;
  }
}
