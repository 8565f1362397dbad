import { randomUUID } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { type SegmentRecord, type SegmentWriter, serializeSegmentRecord } from "@insomnia/segment-store";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { message, sharedConnectionString, start, storeRejection } from "./__fixtures__/stores.ts";
import { MAX_BATCH_JSON_CHARS, MAX_BATCH_RECORDS, storedPositions } from "./append-batcher.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";

let admin: pg.Pool;
beforeAll(() => {
  admin = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
});
afterAll(async () => {
  await admin.end();
});

interface Pods {
  readonly pool: pg.Pool;
  readonly stores: PostgresSegmentStore[];
  readonly writers: SegmentWriter[];
  readonly close: () => Promise<void>;
}

/** `count` pods, each with an open segment, on one pool of one connection (so appends that arrive together are batched). */
async function podsOnOneConnection(
  count: number,
  podId: (i: number) => string = () => `pod-${randomUUID()}`,
  options: pg.PoolConfig = {},
) {
  const applicationName = `batch-${randomUUID()}`;
  const pool = new pg.Pool({
    connectionString: sharedConnectionString(),
    max: 1,
    application_name: applicationName,
    ...options,
  });
  const stores: PostgresSegmentStore[] = [];
  for (let i = 0; i < count; i += 1) stores.push(await PostgresSegmentStore.open({ pool, podId: podId(i) }));
  const writers: SegmentWriter[] = [];
  for (const store of stores) writers.push(await store.createSegment(start));
  const pods: Pods = {
    pool,
    stores,
    writers,
    close: async () => {
      await Promise.all(stores.map((store) => store.close().catch(() => undefined)));
      await pool.end();
    },
  };
  return { ...pods, applicationName };
}

/**
 * Starts `appends` while the pool's only connection is held elsewhere, so all of them wait
 * for it together, then lets the connection go; returns each append's outcome.
 */
async function together(pool: pg.Pool, appends: () => Promise<void>[]) {
  const held = await pool.connect();
  const pending = appends().map((p) =>
    p.then(
      () => "stored",
      (error: { code?: string }) => error.code ?? String(error),
    ),
  );
  // Every append reaches the batcher without I/O; one turn of the event loop is enough.
  await new Promise((resolve) => setImmediate(resolve));
  held.release();
  return Promise.all(pending);
}

/** Per pod, the transaction ids its records (after the start record) were written in. */
async function transactionsOf(stores: readonly PostgresSegmentStore[]): Promise<Map<string, string[]>> {
  const { rows } = await admin.query<{ pod_id: string; xid: string }>(
    "SELECT pod_id, xmin::text AS xid FROM insomnia.records WHERE pod_id = ANY($1) AND seq > 0 ORDER BY pod_id, seq",
    [stores.map((store) => store.podId)],
  );
  const byPod = new Map<string, string[]>(stores.map((store) => [store.podId, []]));
  for (const row of rows) byPod.get(row.pod_id)?.push(row.xid);
  return byPod;
}

/** Another store of `store`'s pod takes its segment over, as if its writer's lease had run out. */
async function takeOver(store: PostgresSegmentStore) {
  const other = await PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: store.podId });
  // The first store stopped renewing: its pod's and its segment's leases ran out.
  for (const table of ["pod_writers", "segments"]) {
    await admin.query(
      `UPDATE insomnia.${table} SET lease_expires_at = now() - interval '1 millisecond' WHERE pod_id = $1`,
      [store.podId],
    );
  }
  return { other, taken: await other.openSegment("seg-0000000001") };
}

describe("group commit of appends that arrive together", () => {
  it("appends_waiting_together_share_one_transaction_and_read_back_verbatim", async () => {
    // Pod ids that array syntax would trip on, were they not quoted.
    const names = ['a"b', "c\\d", "{e}", "f,g", "NULL", " h ", "i'j", "日本"];
    const run = randomUUID();
    const pods = await podsOnOneConnection(names.length, (i) => `${names[i]}-${run}`);
    try {
      const records: SegmentRecord[] = names.map((name, i) => ({
        type: "message",
        message: { role: "user", content: `${name} \u0000 \ud800 ${"\\"}"q"`, keys: { z: i, a: 1e308 } },
      }));
      const outcomes = await together(pods.pool, () =>
        pods.writers.map((w, i) => w.append(records[i] as SegmentRecord)),
      );
      expect(outcomes).toEqual(names.map(() => "stored"));

      const xids = [...(await transactionsOf(pods.stores)).values()].flat();
      expect(xids).toHaveLength(names.length);
      expect(new Set(xids).size).toBe(1);
      for (const [i, store] of pods.stores.entries()) {
        const { rows } = await admin.query<{ body: string }>(
          "SELECT body::text AS body FROM insomnia.records WHERE pod_id = $1 AND seq = 1",
          [store.podId],
        );
        expect(rows).toEqual([
          { body: serializeSegmentRecord(records[i] as SegmentRecord, "seg-0000000001", "message") },
        ]);
        expect((await store.readSegment("seg-0000000001")).records).toEqual([start, records[i]]);
      }
    } finally {
      await pods.close();
    }
  });

  it("a_batch_takes_at_most_its_limit_and_the_rest_goes_next", { timeout: SLOW_TEST_TIMEOUT_MS }, async () => {
    const count = MAX_BATCH_RECORDS + 5;
    const pods = await podsOnOneConnection(count);
    try {
      const outcomes = await together(pods.pool, () => pods.writers.map((w) => w.append(message(1))));
      expect(outcomes.filter((o) => o === "stored")).toHaveLength(count);
      const perTransaction = new Map<string, number>();
      for (const xid of [...(await transactionsOf(pods.stores)).values()].flat()) {
        perTransaction.set(xid, (perTransaction.get(xid) ?? 0) + 1);
      }
      expect([...perTransaction.values()]).toEqual([MAX_BATCH_RECORDS, 5]);
    } finally {
      await pods.close();
    }
  });

  it("records_too_large_to_go_together_go_one_by_one", async () => {
    const pods = await podsOnOneConnection(3);
    try {
      const big: SegmentRecord = { type: "message", message: { content: "x".repeat(MAX_BATCH_JSON_CHARS * 0.6) } };
      const outcomes = await together(pods.pool, () => pods.writers.map((w) => w.append(big)));
      expect(outcomes).toEqual(["stored", "stored", "stored"]);
      const xids = [...(await transactionsOf(pods.stores)).values()].flat();
      expect(new Set(xids).size).toBe(3);
      for (const store of pods.stores) {
        expect((await store.readSegment("seg-0000000001")).records).toEqual([start, big]);
      }
    } finally {
      await pods.close();
    }
  });

  it("a_fenced_writer_in_a_batch_writes_nothing_and_the_others_are_stored", async () => {
    const pods = await podsOnOneConnection(4);
    const first = pods.stores[0] as PostgresSegmentStore;
    const { other, taken } = await takeOver(first);
    try {
      const outcomes = await together(pods.pool, () => pods.writers.map((w) => w.append(message(1))));
      expect(outcomes).toEqual(["SEGMENT_FENCED", "stored", "stored", "stored"]);
      const xids = await transactionsOf(pods.stores);
      expect(xids.get(first.podId)).toEqual([]);
      expect(new Set(pods.stores.slice(1).flatMap((s) => xids.get(s.podId) ?? [])).size).toBe(1);
      // The writer that took over goes on from what is stored.
      await taken.writer.append(message(2));
      expect((await other.readSegment("seg-0000000001")).records).toEqual([start, message(2)]);
    } finally {
      await other.close();
      await pods.close();
    }
  });

  it("an_application_s_own_type_parsers_do_not_change_what_a_batch_is_told", async () => {
    // An application that reads integer arrays its own way (here: as text) shares the pool.
    const types = {
      getTypeParser: (oid: number, format?: "text" | "binary") =>
        oid === 1007 ? (value: string) => `parsed:${value}` : pg.types.getTypeParser(oid, format),
    };
    const pods = await podsOnOneConnection(3, undefined, { types });
    const first = pods.stores[0] as PostgresSegmentStore;
    const { other, taken } = await takeOver(first);
    try {
      const outcomes = await together(pods.pool, () => pods.writers.map((w) => w.append(message(1))));
      expect(outcomes).toEqual(["SEGMENT_FENCED", "stored", "stored"]);
      expect((await transactionsOf(pods.stores)).get(first.podId)).toEqual([]);
      await taken.writer.close();
    } finally {
      await other.close();
      await pods.close();
    }
  });

  it("an_answer_that_is_not_a_list_of_positions_is_never_read_as_stored", () => {
    expect(storedPositions(null, 3)).toEqual(new Set());
    expect(storedPositions("{1,3}", 3)).toEqual(new Set([1, 3]));
    for (const answer of ["{1,4}", "{0}", "{1,1}", "{}", "{ 1}", "1,2", "parsed:{1}", [1, 2], 2, undefined, "{01}"]) {
      expect([answer, storedPositions(answer, 3)]).toEqual([answer, undefined]);
    }
  });

  it("appends_waiting_when_the_pool_is_ended_fail_at_once_instead_of_hanging", async () => {
    const pods = await podsOnOneConnection(2);
    const [a, b] = pods.writers as [SegmentWriter, SegmentWriter];
    const held = await pods.pool.connect();
    const first = a.append(message(1)).then(
      () => "stored",
      (error: { code?: string; durable?: unknown }) => [error.code, error.durable],
    );
    await new Promise((resolve) => setImmediate(resolve));
    const ended = pods.pool.end();
    held.release();
    expect(await first).toEqual(["SEGMENT_UNAVAILABLE", false]);
    const later = await storeRejection(b.append(message(1)));
    expect([later.code, later.durable]).toEqual(["SEGMENT_UNAVAILABLE", false]);
    await ended;
    // Closing the writers waits for their appends: it returns.
    await Promise.all(pods.writers.map((w) => w.close()));
    await Promise.all(pods.stores.map((store) => store.close()));
  });

  it("a_connection_that_cannot_be_had_fails_only_the_appends_waiting_when_it_was_asked_for", async () => {
    const pods = await podsOnOneConnection(2);
    // A server that takes connections and answers nothing until told to hang up.
    const sockets: Socket[] = [];
    const server = createServer((socket) => {
      socket.on("error", () => undefined);
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    try {
      // The pool's one connection is dropped; the next one it makes goes to the server above.
      (await pods.pool.connect()).release(true);
      pods.pool.options.connectionString = `postgres://nobody@127.0.0.1:${address.port}/none`;
      const [a, b] = pods.writers as [SegmentWriter, SegmentWriter];
      const outcome = (p: Promise<void>) =>
        p.then(
          () => "stored",
          (error: { code?: string; durable?: unknown }) => [error.code, error.durable],
        );
      const first = outcome(a.append(message(1)));
      while (sockets.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
      // Queued after the connection was asked for: it must not fail with that one.
      const second = outcome(b.append(message(1)));
      await new Promise((resolve) => setImmediate(resolve));
      sockets[0]?.destroy();
      expect(await first).toEqual(["SEGMENT_UNAVAILABLE", false]);
      while (sockets.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      sockets[1]?.destroy();
      expect(await second).toEqual(["SEGMENT_UNAVAILABLE", false]);
      expect(sockets).toHaveLength(2);
    } finally {
      server.close();
      for (const socket of sockets) socket.destroy();
      await pods.close();
    }
  });

  it("a_batch_the_database_refuses_is_sent_again_one_by_one_and_only_the_refused_append_fails", async () => {
    const pods = await podsOnOneConnection(4);
    const first = pods.stores[0] as PostgresSegmentStore;
    try {
      // Someone else's record at the place the first writer appends to next: its insert breaks the key.
      await admin.query(
        'INSERT INTO insomnia.records (pod_id, segment_no, seq, record_id, body) VALUES ($1, 1, 1, gen_random_uuid(), \'{"type":"message","message":{}}\')',
        [first.podId],
      );
      const outcomes = await together(pods.pool, () => pods.writers.map((w) => w.append(message(1))));
      expect(outcomes).toEqual(["SEGMENT_FENCED", "stored", "stored", "stored"]);
      const fenced = await storeRejection((pods.writers[0] as SegmentWriter).append(message(2)));
      expect([fenced.code, fenced.durable]).toEqual(["SEGMENT_FENCED", false]);
      for (const store of pods.stores.slice(1)) {
        expect((await store.readSegment("seg-0000000001")).records).toEqual([start, message(1)]);
      }
      expect((await first.readSegment("seg-0000000001")).records).toEqual([start, { type: "message", message: {} }]);
    } finally {
      await pods.close();
    }
  });

  it("a_batch_whose_connection_is_killed_mid_statement_is_resolved_append_by_append", async () => {
    const pods = await podsOnOneConnection(4);
    const first = pods.stores[0] as PostgresSegmentStore;
    const blocker = await admin.connect();
    try {
      // The first pod's segment row locked elsewhere: the batch waits on it, then its backend is killed.
      await blocker.query("BEGIN");
      await blocker.query("SELECT 1 FROM insomnia.segments WHERE pod_id = $1 FOR UPDATE", [first.podId]);
      const appended = together(pods.pool, () => pods.writers.map((w) => w.append(message(1))));
      let killed = false;
      while (!killed) {
        const { rows } = await admin.query<{ ok: boolean }>(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [pods.applicationName],
        );
        killed = rows.some((row) => row.ok);
        if (!killed) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await blocker.query("ROLLBACK");
      expect(await appended).toEqual(["stored", "stored", "stored", "stored"]);
      for (const store of pods.stores) {
        expect((await store.readSegment("seg-0000000001")).records).toEqual([start, message(1)]);
      }
      // Each writer goes on at the next place: nothing was written twice or skipped.
      await Promise.all(pods.writers.map((w) => w.append(message(2))));
      for (const store of pods.stores) {
        expect((await store.readSegment("seg-0000000001")).records).toEqual([start, message(1), message(2)]);
      }
    } finally {
      blocker.release();
      await pods.close();
    }
  });
});
