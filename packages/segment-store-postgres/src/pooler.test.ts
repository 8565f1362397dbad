import { randomUUID } from "node:crypto";
import { describeSegmentStoreConformance } from "@insomnia/segment-store/testing";
import pg from "pg";
import { afterAll, beforeAll, expect, inject, test } from "vitest";
import { conformancePod, start } from "./__fixtures__/stores.ts";
import { TransactionPooler } from "./__fixtures__/transaction-pooler.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";

// Everything through a transaction-mode pooler with two server connections: a store that kept
// state in a session (a named prepared statement, SET, a session advisory lock) would see
// another client's session, or lose its own, from one transaction to the next.
let pooler: TransactionPooler;
beforeAll(async () => {
  pooler = await TransactionPooler.start(Number(new URL(inject("pg").connectionString).port), 2);
});
afterAll(async () => {
  await pooler.close();
});

test("the_pooler_multiplexes_many_clients_onto_two_server_connections", async () => {
  const clients = Array.from({ length: 6 }, () => new pg.Client({ connectionString: pooler.connectionString }));
  await Promise.all(clients.map((client) => client.connect()));
  const pids = new Set<number>();
  for (let round = 0; round < 3; round += 1) {
    for (const client of clients) {
      pids.add((await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0);
    }
  }
  await Promise.all(clients.map((client) => client.end()));
  // Session state does not survive here: six clients, at most two backends.
  expect(pids.size).toBeLessThanOrEqual(2);
  expect([...pids].every((pid) => pooler.backendPids.has(pid))).toBe(true);
});

test("writers_through_the_pooler_lock_fence_and_append_as_directly", async () => {
  const podId = `pooled-${randomUUID()}`;
  const a = await PostgresSegmentStore.open({ connectionString: pooler.connectionString, podId });
  const b = await PostgresSegmentStore.open({ connectionString: pooler.connectionString, podId });
  try {
    const writer = await a.createSegment(start);
    const appends = Array.from({ length: 30 }, (_, n) => writer.append({ type: "message", message: { n } }));
    const locked = await b.openSegment(writer.segmentId).catch((error: { code?: string }) => error.code);
    await Promise.all(appends);
    expect(locked).toBe("SEGMENT_LOCKED");
    await writer.close();
    const opened = await b.openSegment(writer.segmentId);
    expect(opened.records).toHaveLength(31);
    await opened.writer.close();
  } finally {
    await a.close();
    await b.close();
  }
  expect(pooler.clients).toBeGreaterThan(2);
});

describeSegmentStoreConformance(
  "PostgresSegmentStore through a transaction-mode pooler",
  () => conformancePod(pooler.connectionString, inject("pg").distDir, "pooled-conformance"),
  {
    skip: {
      corruptTail: "no torn tail in PostgreSQL (see postgres-segment-store.conformance.test.ts)",
      corruptMiddle: "damage is tested directly against the server in postgres-segment-store.conformance.test.ts",
      crashedLock: "tested directly against the server in postgres-segment-store.conformance.test.ts",
      snapshot: "tested directly against the server in postgres-segment-store.conformance.test.ts",
    },
  },
);
