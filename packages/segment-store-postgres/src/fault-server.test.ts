import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, test, vi } from "vitest";
import { SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { childRecord } from "./__fixtures__/child-writer.ts";
import { CuttingProxy } from "./__fixtures__/cutting-proxy.ts";
import { PgServer } from "./__fixtures__/pg-server.ts";
import { start } from "./__fixtures__/stores.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";
import { SegmentStoreError } from "@insomnia/segment-store";
import type { SegmentRecord } from "@insomnia/segment-store";

// Servers stopped and started, processes killed at random points: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// Each test here crashes, stops or cuts off a server: every one gets its own server, a copy
// of the template cluster, so the other suites' shared server is never touched.
const servers: PgServer[] = [];
const stores: PostgresSegmentStore[] = [];
async function ownServer(): Promise<PgServer> {
  const { binaries, templateDir } = inject("pg");
  const server = await PgServer.copyOf({ binaries, dataDir: templateDir });
  servers.push(server);
  await server.start();
  return server;
}
async function openStore(options: Parameters<typeof PostgresSegmentStore.open>[0]): Promise<PostgresSegmentStore> {
  const store = await PostgresSegmentStore.open(options);
  stores.push(store);
  return store;
}
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close().catch(() => undefined)));
  await Promise.all(servers.map((server) => server.destroy()));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Appends records 0..total-1 in order, each retried until it is acknowledged; collects the coded errors on the way. */
function appendAll(
  writer: { append(record: SegmentRecord): Promise<void> },
  total: number,
  acked: number[],
  errors: SegmentStoreError[],
): Promise<void> {
  return (async () => {
    for (let n = 0; n < total; ) {
      try {
        await writer.append(childRecord(n));
        acked.push(n);
        n += 1;
      } catch (error) {
        if (!SegmentStoreError.is(error)) throw error;
        errors.push(error);
        // Retrying the same record is what makes an unknown outcome safe: written at most once.
        await sleep(20);
      }
    }
  })();
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(5);
}

const records = (total: number): SegmentRecord[] => [start, ...Array.from({ length: total }, (_, n) => childRecord(n))];

describe("server faults", () => {
  test("server_crash_mid_run_keeps_every_acknowledged_append_and_the_writer_goes_on", async () => {
    const server = await ownServer();
    const store = await openStore({ connectionString: server.connectionString, podId: "crash", resolveTimeoutMs: 300 });
    const writer = await store.createSegment(start);
    const acked: number[] = [];
    const errors: SegmentStoreError[] = [];
    const run = appendAll(writer, 120, acked, errors);
    await until(() => acked.length >= 40);
    await server.stop("immediate");
    const ackedBeforeCrash = [...acked];
    await until(() => errors.length >= 2);
    await server.start();
    await run;

    expect(acked).toEqual(Array.from({ length: 120 }, (_, n) => n));
    expect(errors.map((e) => e.code)).toEqual(errors.map(() => "SEGMENT_UNAVAILABLE"));
    expect(errors.every((e) => e.durable === false || e.durable === "unknown")).toBe(true);
    const { records: stored } = await store.readSegment(writer.segmentId);
    expect(stored).toEqual(records(120));
    expect(stored.slice(1, ackedBeforeCrash.length + 1)).toEqual(ackedBeforeCrash.map(childRecord));
  });

  test("terminated_backend_mid_append_is_resolved_and_written_once", async () => {
    const server = await ownServer();
    const application = `writer-${randomUUID()}`;
    const pool = new pg.Pool({ connectionString: server.connectionString, application_name: application });
    const store = await openStore({ pool, podId: "terminate" });
    const writer = await store.createSegment(start);
    await writer.append(childRecord(0));
    const admin = new pg.Client({ connectionString: server.connectionString });
    await admin.connect();
    try {
      // Hold the segment's row, so the next append is certainly in the middle of its statement
      // (waiting on the row) when its backend is terminated.
      await admin.query("BEGIN");
      await admin.query("SELECT 1 FROM insomnia.segments WHERE pod_id = 'terminate' FOR UPDATE");
      const appending = writer.append(childRecord(1));
      let terminated = 0;
      while (terminated === 0) {
        const { rows } = await admin.query<{ ok: boolean }>(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [application],
        );
        terminated += rows.filter((row) => row.ok).length;
      }
      await admin.query("ROLLBACK");
      await appending;
      expect(terminated).toBe(1);
    } finally {
      await admin.end();
    }
    await writer.append(childRecord(2));
    expect((await store.readSegment(writer.segmentId)).records).toEqual(records(3));
  });

  test("terminations_at_random_points_of_a_run_leave_each_record_exactly_once", async () => {
    const server = await ownServer();
    const application = `writer-${randomUUID()}`;
    const pool = new pg.Pool({ connectionString: server.connectionString, application_name: application, max: 2 });
    const store = await openStore({ pool, podId: "terminate-many" });
    const writer = await store.createSegment(start);
    const acked: number[] = [];
    const errors: SegmentStoreError[] = [];
    const admin = new pg.Client({ connectionString: server.connectionString });
    await admin.connect();
    const run = appendAll(writer, 150, acked, errors);
    // Forty terminations at random moments (between statements, inside them, inside the
    // resolution of an earlier one), then the run is left to finish.
    let terminations = 0;
    while (terminations < 40 && acked.length < 150) {
      const { rows } = await admin.query<{ ok: boolean }>(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1",
        [application],
      );
      terminations += rows.filter((row) => row.ok).length;
      await sleep(Math.random() * 25);
    }
    await run;
    await admin.end();
    expect(terminations).toBeGreaterThan(0);
    expect(acked).toEqual(Array.from({ length: 150 }, (_, n) => n));
    expect(errors.map((e) => e.code)).toEqual(errors.map(() => "SEGMENT_UNAVAILABLE"));
    expect((await store.readSegment(writer.segmentId)).records).toEqual(records(150));
  });

  test("commit_lost_in_transit_is_learned_as_durable_and_not_written_twice", async () => {
    const server = await ownServer();
    const proxy = await CuttingProxy.start(server.port);
    try {
      const store = await openStore({ connectionString: proxy.connectionString, podId: "lost-commit" });
      const writer = await store.createSegment(start);
      await writer.append(childRecord(0));
      proxy.arm("after");
      await writer.append(childRecord(1));
      expect(proxy.cuts).toMatchObject({ before: 0, after: 1 });
      proxy.arm("before");
      await writer.append(childRecord(2));
      expect(proxy.cuts).toMatchObject({ before: 1, after: 1 });
      await writer.append(childRecord(3));
      expect((await store.readSegment(writer.segmentId)).records).toEqual(records(4));
    } finally {
      await proxy.close();
    }
  });

  test("a_create_whose_commit_is_lost_is_learned_and_one_cut_before_commit_leaves_nothing", async () => {
    const server = await ownServer();
    const proxy = await CuttingProxy.start(server.port);
    try {
      const store = await openStore({ connectionString: proxy.connectionString, podId: "lost-create" });
      proxy.arm("after-commit");
      const writer = await store.createSegment(start);
      expect(proxy.cuts["after-commit"]).toBe(1);
      await writer.append(childRecord(0));
      expect(await store.listSegments()).toEqual([writer.segmentId]);

      proxy.arm("before-commit");
      const error = await store.createSegment(start).catch((e: unknown) => e);
      expect(proxy.cuts["before-commit"]).toBe(1);
      expect(SegmentStoreError.is(error) && [error.code, error.durable]).toEqual(["SEGMENT_UNAVAILABLE", false]);
      expect(await store.listSegments()).toEqual([writer.segmentId]);
      const next = await store.createSegment(start);
      expect(await store.listSegments()).toEqual([writer.segmentId, next.segmentId]);
      expect((await store.readSegment(writer.segmentId)).records).toEqual(records(1));
    } finally {
      await proxy.close();
    }
  });

  test("server_stopped_while_idle_gives_a_coded_error_then_the_writer_goes_on", async () => {
    const server = await ownServer();
    const store = await openStore({ connectionString: server.connectionString, podId: "idle", resolveTimeoutMs: 300 });
    const writer = await store.createSegment(start);
    await writer.append(childRecord(0));

    // Down and up again while idle: the pool's dead connections cost the caller nothing.
    await server.stop("fast");
    await server.start();
    await writer.append(childRecord(1));

    // Down while idle, append attempted: a coded error, nothing written; up again: goes on.
    await server.stop("immediate");
    const error = await writer.append(childRecord(2)).catch((e: unknown) => e);
    expect(SegmentStoreError.is(error) && [error.code, error.durable !== true]).toEqual(["SEGMENT_UNAVAILABLE", true]);
    expect(SegmentStoreError.is(error) && error.message).toMatch(/PostgreSQL is unavailable/);
    const listed = await store.listSegments().catch((e: unknown) => e);
    expect(SegmentStoreError.is(listed) && listed.code).toBe("SEGMENT_UNAVAILABLE");
    await server.start();
    await writer.append(childRecord(2));
    await writer.append(childRecord(3));
    expect((await store.readSegment(writer.segmentId)).records).toEqual(records(4));
  });

  test("open_against_a_stopped_server_is_a_coded_error", async () => {
    const server = await ownServer();
    await server.stop("fast");
    const error = await PostgresSegmentStore.open({ connectionString: server.connectionString, podId: "x" }).catch(
      (e: unknown) => e,
    );
    expect(SegmentStoreError.is(error) && error.code).toBe("SEGMENT_UNAVAILABLE");
  });
});
