import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { ChildWriter, childRecord } from "./__fixtures__/child-writer.ts";
import { sharedConnectionString } from "./__fixtures__/stores.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

// Servers stopped and started, processes killed at random points: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

let pool: pg.Pool;
beforeAll(() => {
  pool = new pg.Pool({ connectionString: sharedConnectionString(), max: 4 });
});
afterAll(async () => {
  await pool.end();
});

/** A small seeded PRNG (mulberry32), so a failing trial can be replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Each trial is a new process; the quick run keeps every kind of trial (a third die before the segment is made).
const TRIALS = propertyRuns(12, 200);
const PARALLEL = 8;

interface Trial {
  readonly trial: number;
  readonly acked: number[];
  readonly stored: number[] | undefined;
}

async function runTrial(trial: number, rand: () => number): Promise<Trial> {
  const podId = `kill-${trial}-${randomUUID()}`;
  const child = new ChildWriter({ connectionString: sharedConnectionString(), podId, mode: "append" });
  // Every third trial dies before or while the segment is made (during migrations,
  // connecting, createSegment); the others after a random number of acknowledged appends,
  // then a random sub-millisecond to few-millisecond delay into the next append.
  if (trial % 3 === 0) {
    await new Promise((resolve) => setTimeout(resolve, rand() * 250));
  } else {
    const target = Math.floor(rand() * 15);
    await child.waitFor((line) => line === `ack ${target}`);
    const spins = Math.floor(rand() * 40);
    for (let i = 0; i < spins; i += 1) await new Promise((resolve) => setImmediate(resolve));
  }
  child.kill("SIGKILL");
  await child.exited;
  const store = await PostgresSegmentStore.open({ pool, podId });
  const ids = await store.listSegments();
  expect(ids.length).toBeLessThanOrEqual(1);
  const id = ids[0];
  if (id === undefined) return { trial, acked: child.acked(), stored: undefined };
  const { records } = await store.readSegment(id);
  expect(records[0]?.type).toBe("segment_start");
  const stored = records.slice(1).map((record) => {
    expect(record).toEqual(childRecord((record as ReturnType<typeof childRecord>).message.n));
    return (record as ReturnType<typeof childRecord>).message.n;
  });
  return { trial, acked: child.acked(), stored };
}

test("client_sigkilled_at_random_points_keeps_exactly_the_acknowledged_records_in_order", async () => {
  const seed = Number(process.env.INSOMNIA_FAULT_SEED ?? 20261201);
  const results: Trial[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < TRIALS) {
        const trial = next;
        next += 1;
        // A stream per trial: what a trial does depends on the seed and its number, not on
        // which of the parallel trials asked first.
        results.push(await runTrial(trial, random(seed + trial)));
      }
    }),
  );
  expect(results).toHaveLength(TRIALS);
  for (const { trial, acked, stored } of results) {
    const where = `seed ${seed}, trial ${trial}`;
    // The child acknowledges in order, so its acks are 0..k-1.
    expect(acked, where).toEqual(acked.map((_, i) => i));
    if (stored === undefined) {
      expect(acked, where).toEqual([]);
      continue;
    }
    // Every acknowledged record is stored, in order, nothing invented: the log is 0..m-1 where
    // m is the number acknowledged, or one more (the append in flight committed, its ack never printed).
    expect(stored, where).toEqual(stored.map((_, i) => i));
    expect([acked.length, acked.length + 1], where).toContain(stored.length);
  }
});
