import { readFileSync } from "node:fs";
import { MemorySegmentStore } from "@insomnia/segment-store";
import type { SegmentRecord, SegmentStartRecord } from "@insomnia/segment-store";
import { Worker } from "@insomnia/worker";
import type { LlmResponse } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import { describe, expect, test } from "vitest";
import { MESSAGE_FORMAT_VERSION, Pod } from "./pod.ts";

/** Writes records as an earlier version wrote them, byte for byte the same JSON, into a store. */
async function storeWith(records: readonly SegmentRecord[]): Promise<{ store: MemorySegmentStore; segmentId: string }> {
  const store = new MemorySegmentStore();
  const writer = await store.createSegment(records[0] as SegmentStartRecord);
  for (const record of records.slice(1)) await writer.append(record);
  await writer.close();
  return { store, segmentId: writer.segmentId };
}

function fixture(name: string): SegmentRecord[] {
  const text = readFileSync(new URL(`./__fixtures__/log-formats/${name}`, import.meta.url), "utf8");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as SegmentRecord);
}

function worker(responses: LlmResponse[]) {
  const client = new ScriptedLlmClient(responses);
  const w = new Worker({ client });
  w.tools.register(echoTool("echo"));
  return { client, worker: w };
}

describe("log format versions", () => {
  test("a_version_1_log_of_text_only_messages_restores_and_continues", async () => {
    const records = fixture("v1.jsonl");
    const { store, segmentId } = await storeWith(records);
    const { client, worker: w } = worker([{ content: "ok" }]);
    const pod = await Pod.restore(store, segmentId, w);
    expect(w.getHistory()).toEqual(records.slice(1).map((r) => (r as { message: unknown }).message));
    await pod.run("and b?");
    expect(client.requests[0]!.messages).toHaveLength(5);
    const { records: after } = await store.readSegment(segmentId);
    expect(after.at(-1)).toEqual({
      type: "message",
      version: MESSAGE_FORMAT_VERSION,
      message: { role: "assistant", content: "ok" },
      call: expect.objectContaining({ messages: expect.any(Array) }), // what the call sent (the cost ledger)
    });
    await pod.close();
  });

  test("a_version_2_log_with_images_reasoning_turn_ids_and_interrupted_text_restores_exactly", async () => {
    const v2 = [
      ...fixture("v1.jsonl").slice(0, 1),
      {
        type: "message",
        version: 2,
        message: {
          role: "user",
          content: "what is this?",
          images: [{ mediaType: "image/png", data: "iVBORw0KGgoAAAAA" }],
          turnId: "t-1",
        },
      },
      {
        type: "message",
        version: 2,
        message: {
          role: "assistant",
          content: "A pict",
          reasoning: [{ text: "look", provider: "anthropic", data: { anthropic: { signature: "sig==" } } }],
          interrupted: true,
        },
      },
    ] as SegmentRecord[];
    const { store, segmentId } = await storeWith(v2);
    const { worker: w } = worker([]);
    const pod = await Pod.restore(store, segmentId, w);
    expect(w.getHistory()).toEqual(v2.slice(1).map((r) => (r as { message: unknown }).message));
    await pod.close();
  });

  test("a_log_from_a_newer_version_is_refused_with_a_code_and_nothing_changes", async () => {
    const records = [
      ...fixture("v1.jsonl"),
      { type: "message", version: MESSAGE_FORMAT_VERSION + 1, message: { role: "user", content: "x" } },
    ] as SegmentRecord[];
    const { store, segmentId } = await storeWith(records);
    await expect(Pod.restore(store, segmentId, worker([]).worker)).rejects.toMatchObject({ code: "NEWER_LOG_FORMAT" });
    expect((await store.readSegment(segmentId)).records).toHaveLength(records.length);
  });
});
