import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { podRejection } from "./__fixtures__/pod-rejection.ts";
import { PodError } from "./pod-error.ts";
import { FileSegmentStore } from "./segment-file-store.ts";
import { compareSegmentIds } from "./segment-id.ts";
import { MemorySegmentStore } from "./segment-memory-store.ts";
import type { SegmentRecord, SegmentStartRecord } from "./segment-record.ts";
import type { SegmentStore } from "./segment-store.ts";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function fileStore(): Promise<SegmentStore> {
  const dir = await mkdtemp(join(tmpdir(), "insomnia-segment-store-"));
  dirs.push(dir);
  return new FileSegmentStore(join(dir, "segments"));
}

const start: SegmentStartRecord = {
  type: "segment_start",
  systemPrompt: "You are a pod.\n\n---\n## Working boundaries\n\nReadable:\n  - /tmp/ワーク\n",
  sources: [{ ref: "$insomnia/default", file: "/opt/prompts/default.md", sha256: "ab".repeat(32) }],
  createdAt: "2025-01-02T03:04:05Z",
};

function message(n: number): SegmentRecord {
  return {
    type: "message",
    message: { role: n % 2 === 0 ? "user" : "assistant", content: `message ${n}: 日本語 🙂\n"q"` },
  };
}

describe.each([
  ["FileSegmentStore", fileStore],
  ["MemorySegmentStore", async (): Promise<SegmentStore> => new MemorySegmentStore()],
])("%s conformance", (_name, makeStore) => {
  it("round_trips_start_and_messages", async () => {
    const store = await makeStore();
    const writer = await store.createSegment(start);
    for (let n = 0; n < 5; n += 1) await writer.append(message(n));
    await writer.close();
    const { records, warnings } = await store.readSegment(writer.segmentId);
    expect(records).toEqual([start, message(0), message(1), message(2), message(3), message(4)]);
    expect(warnings).toEqual([]);
  });

  it("keeps_optional_start_fields_and_continues_after_reopen", async () => {
    const store = await makeStore();
    const first = await store.createSegment(start);
    await first.close();
    const compacted: SegmentStartRecord = { ...start, previousSegment: first.segmentId, summary: "earlier: ひとこと" };
    const writer = await store.createSegment(compacted);
    await writer.append(message(1));
    await writer.close();
    const opened = await store.openSegment(writer.segmentId);
    expect(opened.records).toEqual([compacted, message(1)]);
    expect(opened.warnings).toEqual([]);
    await opened.writer.append(message(2));
    await opened.writer.close();
    expect((await store.readSegment(writer.segmentId)).records).toEqual([compacted, message(1), message(2)]);
  });

  it("lists_segments_oldest_first", async () => {
    const store = await makeStore();
    expect(await store.listSegments()).toEqual([]);
    expect(await store.latestSegment()).toBeUndefined();
    const ids: string[] = [];
    for (let n = 0; n < 12; n += 1) {
      const writer = await store.createSegment(start);
      ids.push(writer.segmentId);
      await writer.close();
    }
    expect(new Set(ids).size).toBe(12);
    expect([...ids].sort()).toEqual(ids);
    expect([...ids].sort(compareSegmentIds)).toEqual(ids);
    expect(await store.listSegments()).toEqual(ids);
    expect(await store.latestSegment()).toBe(ids[11]);
  });

  it("second_writer_is_locked_until_the_first_closes", async () => {
    const store = await makeStore();
    const writer = await store.createSegment(start);
    const locked = await podRejection(store.openSegment(writer.segmentId));
    expect(locked.code).toBe("SEGMENT_LOCKED");
    await writer.append(message(0));
    const opened = await store.openSegment(writer.segmentId).catch((error: unknown) => error);
    expect(PodError.is(opened) && opened.code).toBe("SEGMENT_LOCKED");
    await writer.close();
    const reopened = await store.openSegment(writer.segmentId);
    expect(reopened.records).toEqual([start, message(0)]);
    expect((await podRejection(store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
    await reopened.writer.close();
  });

  it("concurrent_creates_get_distinct_ids_and_concurrent_opens_one_writer", async () => {
    const store = await makeStore();
    const writers = await Promise.all(Array.from({ length: 8 }, () => store.createSegment(start)));
    const ids = writers.map((writer) => writer.segmentId);
    expect(new Set(ids).size).toBe(8);
    expect(await store.listSegments()).toEqual([...ids].sort(compareSegmentIds));
    await Promise.all(writers.map((writer) => writer.close()));
    const first = ids[0] ?? "";
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => store.openSegment(first)));
    const opened = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const refused = results.flatMap((result) => (result.status === "rejected" ? [result.reason as unknown] : []));
    expect(opened).toHaveLength(1);
    expect(refused.map((error) => PodError.is(error) && error.code)).toEqual([
      "SEGMENT_LOCKED",
      "SEGMENT_LOCKED",
      "SEGMENT_LOCKED",
    ]);
    await opened[0]?.writer.close();
  });

  it("reads_without_the_lock_while_a_writer_is_open", async () => {
    const store = await makeStore();
    const writer = await store.createSegment(start);
    await writer.append(message(0));
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
    await writer.close();
  });

  it("missing_or_malformed_segment_id_is_not_found", async () => {
    const store = await makeStore();
    for (const id of ["seg-0000000099", "../etc/passwd", "seg-1", ""]) {
      expect((await podRejection(store.readSegment(id))).code).toBe("SEGMENT_NOT_FOUND");
      expect((await podRejection(store.openSegment(id))).code).toBe("SEGMENT_NOT_FOUND");
    }
  });

  it("appends_in_call_order_without_awaiting", async () => {
    const store = await makeStore();
    const writer = await store.createSegment(start);
    const expected = Array.from({ length: 40 }, (_, n) => message(n));
    await Promise.all(expected.map((record) => writer.append(record)));
    await writer.close();
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, ...expected]);
  });

  it("close_is_idempotent_and_append_after_close_fails", async () => {
    const store = await makeStore();
    const writer = await store.createSegment(start);
    const pending = writer.append(message(0));
    const closing = writer.close();
    await pending;
    await closing;
    await writer.close();
    const error = await podRejection(writer.append(message(1)));
    expect(error.code).toBe("SEGMENT_IO");
    expect(error.message).toMatch(/closed/);
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
  });

  it("rejects_non_message_or_non_json_records_and_keeps_the_segment", async () => {
    const store = await makeStore();
    const writer = await store.createSegment(start);
    const bad: unknown[] = [
      { type: "message", message: undefined },
      { type: "message", message: 10n },
      { type: "message" },
      { type: "note", text: "x" },
      { type: "segment_start", systemPrompt: 1, sources: [], createdAt: "x" },
      start,
      null,
    ];
    for (const record of bad) {
      expect((await podRejection(writer.append(record as SegmentRecord))).code).toBe("INVALID_ARGUMENT");
    }
    await writer.append(message(0));
    await writer.close();
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
    for (const notStart of [message(0), { ...start, sources: [{ ref: "$user/x" }] }]) {
      const error = await podRejection(store.createSegment(notStart as SegmentStartRecord));
      expect(error.code).toBe("INVALID_ARGUMENT");
    }
    expect(await store.listSegments()).toEqual([writer.segmentId]);
  });

  it("returns_copies_that_callers_may_mutate", async () => {
    const store = await makeStore();
    const input = { type: "message" as const, message: { content: "a" } };
    const writer = await store.createSegment(start);
    await writer.append(input);
    input.message.content = "changed";
    await writer.close();
    const first = await store.readSegment(writer.segmentId);
    (first.records[1] as { message: { content: string } }).message.content = "mutated";
    expect((await store.readSegment(writer.segmentId)).records[1]).toEqual({
      type: "message",
      message: { content: "a" },
    });
  });
});
