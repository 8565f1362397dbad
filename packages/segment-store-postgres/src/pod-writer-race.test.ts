import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SegmentRecord } from "@insomnia/segment-store";
import pg from "pg";
import { expect, inject, test } from "vitest";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { sharedConnectionString } from "./__fixtures__/stores.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";

interface Reply {
  readonly held: boolean;
  readonly double?: boolean;
  readonly record?: SegmentRecord;
  readonly warnings?: string[];
  readonly created?: boolean;
  readonly code?: string;
  readonly message?: string;
}

/** One long-lived child process (pod-start-child.mjs), asked one round at a time. */
class StartChild {
  readonly #process: ChildProcess;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  readonly ready: Promise<void>;
  #next = 0;

  constructor(readonly name: string) {
    const { distDir } = inject("pg");
    this.#process = fork(
      join(import.meta.dirname, "__fixtures__", "pod-start-child.mjs"),
      [join(distDir, "index.js"), sharedConnectionString()],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    this.ready = new Promise((resolve, reject) => {
      this.#process.once("exit", (code) => reject(new Error(`child ${name} exited (${code})`)));
      this.#process.on("message", (message: Reply & { id?: number; ready?: boolean }) => {
        if (message.ready === true) resolve();
        else if (message.id !== undefined) {
          this.#pending.get(message.id)?.(message);
          this.#pending.delete(message.id);
        }
      });
    });
  }

  round(podId: string, command: Record<string, unknown> = { op: "start" }): Promise<Reply> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#process.send({ ...command, id, podId, name: this.name });
    });
  }

  kill(): void {
    this.#process.kill("SIGKILL");
  }
}

// The deep run (INSOMNIA_DEEP_TESTS=1) runs the rounds issue 27 asks for (100 and 1,000). The new-pod
// fork showed in 5 of 5 tries; the file store's takeover mutants failed by round 21 in 13 of 14 tries
// of its own race test.
const startRounds = propertyRuns(10, 100);
const restoreRounds = propertyRuns(60, 1000);

// Issue 27 item 2: two service processes handling the first message of one pod each created a
// segment, and the first conversation was silently dropped. Now one conversation every time.
test(
  "two_processes_starting_one_new_pod_one_conversation_every_time",
  async () => {
    const children = [new StartChild("a"), new StartChild("b")];
    const pool = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
    const problems: string[] = [];
    try {
      await Promise.all(children.map((child) => child.ready));
      for (let round = 0; round < startRounds; round += 1) {
        const podId = `new-pod-race-${round}-${randomUUID()}`;
        const replies = await Promise.all(children.map((child) => child.round(podId)));
        const held = replies.filter((reply) => reply.held);
        for (const reply of replies) {
          if (!reply.held && reply.code !== "SEGMENT_LOCKED") problems.push(`round ${round}: ${JSON.stringify(reply)}`);
        }
        if (held.filter((reply) => reply.created === true).length !== 1)
          problems.push(`round ${round}: not one creator`);
        const store = await PostgresSegmentStore.open({ pool, podId });
        const ids = await store.listSegments();
        if (ids.length !== 1) problems.push(`round ${round}: ${ids.length} conversations`);
        const records = ids.length === 0 ? [] : (await store.readSegment(ids[0] ?? "")).records;
        await store.close();
        if (records.length !== 1 + held.length)
          problems.push(`round ${round}: ${records.length - 1} of ${held.length} appends`);
      }
    } finally {
      for (const child of children) child.kill();
      await pool.end();
    }
    expect(problems).toEqual([]);
  },
  SLOW_TEST_TIMEOUT_MS,
);

// Issue 27 item 1 on PostgreSQL: three processes restore one crashed pod (its leases left behind
// and run out) at once; exactly one takes the pod over each round, and nothing acknowledged is lost.
test(
  "three_processes_restoring_one_crashed_pod_no_double_holder_no_lost_append",
  async () => {
    const podId = `crashed-pod-race-${randomUUID()}`;
    const pool = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
    const marker = await mkdtemp(join(tmpdir(), "insomnia-pg-race-"));
    const children = [new StartChild("a"), new StartChild("b"), new StartChild("c")];
    const start = {
      type: "segment_start",
      systemPrompt: "race\n",
      sources: [],
      createdAt: "2026-01-01T00:00:00Z",
    } as const;
    const acknowledged: SegmentRecord[] = [];
    const problems: string[] = [];
    let doubles = 0;
    try {
      const setup = await PostgresSegmentStore.open({ pool, podId });
      const first = await setup.createSegment(start);
      await first.close();
      await Promise.all(children.map((child) => child.ready));
      for (let round = 0; round < restoreRounds; round += 1) {
        // What a writer killed while holding the pod leaves: its tokens, and leases that ran out.
        for (const table of ["pod_writers", "segments"]) {
          await pool.query(
            `UPDATE insomnia.${table} SET writer_token = gen_random_uuid(), writer_host = 'gone', writer_pid = 1,
             lease_expires_at = now() - interval '1 second' WHERE pod_id = $1`,
            [podId],
          );
        }
        const command = { op: "restore", round, holding: join(marker, "holding") };
        const replies = await Promise.all(children.map((child) => child.round(podId, command)));
        let stale = 0;
        for (const reply of replies) {
          if (!reply.held) {
            if (reply.code !== "SEGMENT_LOCKED") problems.push(`round ${round}: ${JSON.stringify(reply)}`);
            continue;
          }
          if (reply.double === true) doubles += 1;
          if (reply.record !== undefined) acknowledged.push(reply.record);
          stale += (reply.warnings ?? []).filter((code) => code === "SEGMENT_LOCK_STALE").length;
        }
        if (stale !== 1) problems.push(`round ${round}: ${stale} stale takeovers`);
      }
      const { records } = await setup.readSegment(first.segmentId);
      const key = (record: SegmentRecord) => JSON.stringify(record);
      expect(records.slice(1).map(key).sort()).toEqual(acknowledged.map(key).sort());
      await setup.close();
    } finally {
      for (const child of children) child.kill();
      await pool.end();
      await rm(marker, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
    expect(doubles).toBe(0);
    expect(acknowledged.length).toBeGreaterThanOrEqual(restoreRounds);
  },
  SLOW_TEST_TIMEOUT_MS,
);
