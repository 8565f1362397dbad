import type { SegmentRecord } from "@insomnia/segment-store";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeTestStores,
  message,
  openTestStore,
  sharedConnectionString,
  start,
  storeRejection,
} from "./__fixtures__/stores.ts";
import { openPostgresStore, PostgresSegmentStore } from "./postgres-segment-store.ts";

let admin: pg.Pool;
beforeAll(() => {
  admin = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
});
afterAll(async () => {
  await closeTestStores();
  await admin.end();
});

/** Makes the lease of a segment run out now, as if its writer had stopped renewing it long ago. */
/** What a writer that stopped renewing leaves: its pod's and its segment's leases run out. */
async function expireLease(podId: string, segmentId: string): Promise<void> {
  await admin.query(
    "UPDATE insomnia.pod_writers SET lease_expires_at = now() - interval '1 millisecond' WHERE pod_id = $1",
    [podId],
  );
  const { rowCount } = await admin.query(
    "UPDATE insomnia.segments SET lease_expires_at = now() - interval '1 millisecond' WHERE pod_id = $1 AND segment_no = $2",
    [podId, Number(segmentId.slice(4))],
  );
  expect(rowCount).toBe(1);
}

async function rowCounts(podId: string): Promise<string> {
  const { rows } = await admin.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM insomnia.records WHERE pod_id = $1",
    [podId],
  );
  return rows[0]?.n ?? "";
}

describe("PostgresSegmentStore", () => {
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

  it("quotes_and_backslashes_read_back_verbatim_whatever_standard_conforming_strings_is", async () => {
    // Values go as parameters, never into SQL text: nothing in a record or a pod id may change
    // what is stored, whatever the session's string settings.
    const hostile = [
      "'",
      "''",
      "\\",
      "\\'",
      "E'\\x41'",
      "$$",
      "'); DROP TABLE insomnia.records; --",
      "\\u0000",
      "\\\\n",
    ];
    const records: SegmentRecord[] = hostile.map((text) => ({
      type: "message",
      message: { role: "user", content: text, [text]: text },
    }));
    for (const conforming of ["on", "off"]) {
      const pool = new pg.Pool({
        connectionString: sharedConnectionString(),
        max: 2,
        options: `-c standard_conforming_strings=${conforming}`,
      });
      const store = await PostgresSegmentStore.open({ pool, podId: `it's a \\ pod ${conforming} $$ '; --` });
      try {
        const writer = await store.createSegment(start);
        for (const record of records) await writer.append(record);
        await writer.close();
        const read = await store.readSegment(writer.segmentId);
        expect([conforming, read.records.slice(1)]).toEqual([conforming, records]);
        const { rows } = await admin.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM insomnia.records WHERE pod_id = $1 AND segment_no = 1",
          [store.podId],
        );
        expect(rows).toEqual([{ n: String(records.length + 1) }]);
      } finally {
        await store.close();
        await pool.end();
      }
    }
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

  it("a_writer_whose_lease_was_taken_over_is_fenced_and_writes_nothing", async () => {
    const a = await openTestStore();
    const b = await openTestStore({ podId: a.podId });
    const writer = await a.createSegment(start);
    await writer.append(message(0));
    const locked = await storeRejection(b.openSegment(writer.segmentId));
    expect(locked.code).toBe("SEGMENT_LOCKED");
    expect(locked.message).toMatch(new RegExp(`process ${process.pid} on .*lease runs out at`));

    await expireLease(a.podId, writer.segmentId);
    const taken = await b.openSegment(writer.segmentId);
    expect(taken.records).toEqual([start, message(0)]);
    expect(taken.warnings.map((w) => w.code)).toEqual(["SEGMENT_LOCK_STALE"]);
    await taken.writer.append(message(1));

    const before = await rowCounts(a.podId);
    for (const n of [2, 3]) {
      const fenced = await storeRejection(writer.append(message(n)));
      expect([fenced.code, fenced.durable]).toEqual(["SEGMENT_FENCED", false]);
    }
    expect(await rowCounts(a.podId)).toBe(before);
    // The fenced writer's close gives nothing back: the new writer keeps the segment.
    await writer.close();
    expect((await storeRejection(a.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
    await taken.writer.append(message(2));
    await taken.writer.close();
    expect((await a.readSegment(writer.segmentId)).records).toEqual([start, message(0), message(1), message(2)]);
  });

  it("an_idle_writer_renews_its_lease", async () => {
    const store = await openTestStore({ leaseMs: 300 });
    const writer = await store.createSegment(start);
    const lease = async () =>
      (
        await admin.query<{ t: string }>(
          "SELECT lease_expires_at::text AS t FROM insomnia.segments WHERE pod_id = $1",
          [store.podId],
        )
      ).rows[0]?.t;
    const first = await lease();
    let now = first;
    while (now === first) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      now = await lease();
    }
    expect(now !== undefined && first !== undefined && now > first).toBe(true);
    await writer.append(message(0));
    await writer.close();
    expect(await lease()).toBeNull();
  });

  it("a_database_refuses_a_record_that_is_not_the_next_one", async () => {
    const store = await openTestStore();
    const writer = await store.createSegment(start);
    await writer.append(message(0));
    const insert = (seq: number) =>
      admin
        .query(
          "INSERT INTO insomnia.records (pod_id, segment_no, seq, record_id, body) VALUES ($1, 1, $2, gen_random_uuid(), '{}')",
          [store.podId, seq],
        )
        .then(
          () => "inserted",
          (error: { code?: string }) => error.code,
        );
    // A duplicate breaks the key, a gap the link to the previous record.
    expect(await insert(1)).toBe("23505");
    expect(await insert(3)).toBe("23503");
    expect(await insert(2)).toBe("inserted");
    await writer.close();
  });

  it("bad_options_are_invalid_arguments", async () => {
    const connectionString = sharedConnectionString();
    for (const options of [
      { connectionString, podId: "" },
      { connectionString, podId: "x".repeat(201) },
      { connectionString, podId: "a\ud800" },
      { connectionString, podId: "p", schema: "Bad-Name" },
      { connectionString, podId: "p", schema: "1abc" },
      { connectionString, podId: "p", leaseMs: 0 },
      { connectionString, podId: "p", resolveTimeoutMs: 1.5 },
      { connectionString: "", podId: "p" },
    ]) {
      const error = await storeRejection(PostgresSegmentStore.open(options));
      expect([JSON.stringify(options), error.code]).toEqual([JSON.stringify(options), "INVALID_ARGUMENT"]);
    }
  });

  it("a_given_pool_is_left_open_and_an_own_pool_is_ended", async () => {
    const pool = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
    const store = await PostgresSegmentStore.open({ pool, podId: "given-pool" });
    expect(store.pool).toBe(pool);
    await store.close();
    expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await pool.end();
    const own = await openPostgresStore(sharedConnectionString(), "own-pool");
    await own.close();
    expect(own.pool.ended).toBe(true);
    expect((await storeRejection(own.listSegments())).code).toBe("SEGMENT_IO");
  });
});
