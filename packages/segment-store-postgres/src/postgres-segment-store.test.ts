import { afterAll, describe, expect, it } from "vitest";
import { closeTestStores, message, openTestStore, start, storeRejection } from "./__fixtures__/stores.ts";
import type { SegmentRecord, SegmentStartRecord } from "./segment-contract.ts";

afterAll(closeTestStores);

describe("PostgresSegmentStore", () => {
  it("round_trips_start_and_messages", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    for (let n = 0; n < 5; n += 1) await writer.append(message(n));
    await writer.close();
    const { records, warnings } = await store.readSegment(writer.segmentId);
    expect(records).toEqual([start, message(0), message(1), message(2), message(3), message(4)]);
    expect(warnings).toEqual([]);
  });

  it("keeps_optional_start_fields_and_continues_after_reopen", async () => {
    const store = await openTestStore();
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
    const store = await openTestStore();
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
    expect(await store.listSegments()).toEqual(ids);
    expect(await store.latestSegment()).toBe(ids[11]);
  });

  it("second_writer_is_locked_until_the_first_closes", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    expect((await storeRejection(store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
    await writer.append(message(0));
    await writer.close();
    const reopened = await store.openSegment(writer.segmentId);
    expect(reopened.records).toEqual([start, message(0)]);
    expect((await storeRejection(store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
    await reopened.writer.close();
  });

  it("concurrent_creates_get_distinct_ids_and_concurrent_opens_one_writer", async () => {
    const store = await openTestStore();
    const writers = await Promise.all(Array.from({ length: 8 }, () => store.createSegment(start)));
    const ids = writers.map((writer) => writer.segmentId);
    expect(new Set(ids).size).toBe(8);
    expect(await store.listSegments()).toEqual([...ids].sort());
    await Promise.all(writers.map((writer) => writer.close()));
    const first = ids[0] ?? "";
    const results = await Promise.allSettled(Array.from({ length: 4 }, () => store.openSegment(first)));
    const opened = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const refused = results.flatMap((result) =>
      result.status === "rejected" ? [(result.reason as { code?: unknown }).code] : [],
    );
    expect(opened).toHaveLength(1);
    expect(refused).toEqual(["SEGMENT_LOCKED", "SEGMENT_LOCKED", "SEGMENT_LOCKED"]);
    await opened[0]?.writer.close();
  });

  it("reads_without_the_lock_while_a_writer_is_open", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    await writer.append(message(0));
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
    await writer.close();
  });

  it("missing_or_malformed_segment_id_is_not_found", async () => {
    const store = await openTestStore();
    for (const id of ["seg-0000000099", "../etc/passwd", "seg-1", ""]) {
      expect((await storeRejection(store.readSegment(id))).code).toBe("SEGMENT_NOT_FOUND");
      expect((await storeRejection(store.openSegment(id))).code).toBe("SEGMENT_NOT_FOUND");
    }
  });

  it("appends_in_call_order_without_awaiting", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    const expected = Array.from({ length: 40 }, (_, n) => message(n));
    await Promise.all(expected.map((record) => writer.append(record)));
    await writer.close();
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, ...expected]);
  });

  it("close_is_idempotent_and_append_after_close_fails", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    const pending = writer.append(message(0));
    const closing = writer.close();
    await pending;
    await closing;
    await writer.close();
    const error = await storeRejection(writer.append(message(1)));
    expect(error.code).toBe("SEGMENT_IO");
    expect(error.message).toMatch(/closed/);
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
  });

  it("rejects_non_message_or_non_json_records_and_keeps_the_segment", async () => {
    const store = await openTestStore();
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
      expect((await storeRejection(writer.append(record as SegmentRecord))).code).toBe("INVALID_ARGUMENT");
    }
    await writer.append(message(0));
    await writer.close();
    expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
    for (const notStart of [message(0), { ...start, sources: [{ ref: "$user/x" }] }]) {
      expect((await storeRejection(store.createSegment(notStart as SegmentStartRecord))).code).toBe("INVALID_ARGUMENT");
    }
    expect(await store.listSegments()).toEqual([writer.segmentId]);
  });

  it("keeps_text_that_jsonb_would_refuse_or_change", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    const odd: SegmentRecord = {
      type: "message",
      message: { nul: "a\u0000b", lone: "\ud800", big: 1e308, keys: { z: 1, a: 2 }, dup: "\u2028" },
    };
    await writer.append(odd);
    await writer.close();
    const { records } = await store.readSegment(writer.segmentId);
    expect(records[1]).toEqual(odd);
    expect(JSON.stringify(records[1])).toBe(JSON.stringify(odd));
  });

  it("pods_do_not_see_each_others_segments", async () => {
    const a = await openTestStore();
    const b = await openTestStore();
    const writer = await a.createSegment(start);
    await writer.close();
    expect(await b.listSegments()).toEqual([]);
    expect((await storeRejection(b.readSegment(writer.segmentId))).code).toBe("SEGMENT_NOT_FOUND");
    expect(await a.listSegments()).toEqual([writer.segmentId]);
  });
});
