import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { expect, inject, test } from "vitest";
import { sharedConnectionString } from "./__fixtures__/stores.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";

interface Reply {
  readonly held: boolean;
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

  round(podId: string): Promise<Reply> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#process.send({ id, podId, name: this.name });
    });
  }

  kill(): void {
    this.#process.kill("SIGKILL");
  }
}

// Issue 27 item 2: two service processes handling the first message of one pod each created a
// segment, and the first conversation was silently dropped. Now one conversation every time.
test("two_processes_starting_one_new_pod_100_rounds_one_conversation_every_time", async () => {
  const children = [new StartChild("a"), new StartChild("b")];
  const pool = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
  const problems: string[] = [];
  try {
    await Promise.all(children.map((child) => child.ready));
    for (let round = 0; round < 100; round += 1) {
      const podId = `new-pod-race-${round}-${randomUUID()}`;
      const replies = await Promise.all(children.map((child) => child.round(podId)));
      const held = replies.filter((reply) => reply.held);
      for (const reply of replies) {
        if (!reply.held && reply.code !== "SEGMENT_LOCKED") problems.push(`round ${round}: ${JSON.stringify(reply)}`);
      }
      if (held.filter((reply) => reply.created === true).length !== 1) problems.push(`round ${round}: not one creator`);
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
});
