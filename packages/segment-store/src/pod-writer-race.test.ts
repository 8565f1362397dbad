import { type ChildProcess, fork, spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { BUILT_PACKAGE_URL } from "./__fixtures__/built-package.ts";
import { FileSegmentStore } from "./segment-file-store.ts";
import type { SegmentRecord } from "./segment-record.ts";

/*
 * Issue 27, items 1 and 2, as process tests: real processes racing for one pod's writer lock,
 * each a long-lived child that runs one round per message. The deep run (INSOMNIA_DEEP_TESTS=1)
 * runs the rounds issue 27 asks for; the quick counts still catch a takeover race in nearly
 * every run (a mutant without the exclusive claim failed by round 21 in 13 of 14 tries).
 */
const RESTORE_ROUNDS = propertyRuns(60, 1000);
const START_ROUNDS = propertyRuns(10, 100);

interface Reply {
  readonly held: boolean;
  readonly double?: boolean;
  readonly record?: SegmentRecord;
  readonly created?: boolean;
  readonly warnings?: string[];
  readonly code?: string;
  readonly message?: string;
}

const CHILD = join(import.meta.dirname, "__fixtures__", "pod-race-child.mjs");
const start = {
  type: "segment_start",
  systemPrompt: "race\n",
  sources: [],
  createdAt: "2026-01-01T00:00:00Z",
} as const;

/** One child process, asked one command at a time. */
class RaceChild {
  readonly #process: ChildProcess;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  readonly ready: Promise<void>;
  #next = 0;

  constructor(bundle: string, name: string) {
    this.#process = fork(CHILD, [bundle, name], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.ready = new Promise((resolve, reject) => {
      this.#process.once("exit", (code) => reject(new Error(`race child ${name} exited (${code})`)));
      this.#process.on("message", (message: Reply & { id?: number; ready?: boolean }) => {
        if (message.ready === true) resolve();
        else if (message.id !== undefined) {
          this.#pending.get(message.id)?.(message);
          this.#pending.delete(message.id);
        }
      });
    });
  }

  ask(command: Record<string, unknown>): Promise<Reply> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#process.send({ ...command, id });
    });
  }

  kill(): void {
    this.#process.kill("SIGKILL");
  }
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "insomnia-pod-race-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function children(count: number): Promise<RaceChild[]> {
  const made = Array.from({ length: count }, (_, i) => new RaceChild(BUILT_PACKAGE_URL, `child-${i}`));
  await Promise.all(made.map((child) => child.ready));
  return made;
}

function unexpected(replies: readonly Reply[]): Reply[] {
  return replies.filter((reply) => !reply.held && reply.code !== "SEGMENT_LOCKED");
}

describe("one writer per pod, across processes", () => {
  it(
    "three_processes_restoring_one_crashed_pod_no_double_holder_no_lost_append",
    async () => {
      const dir = join(root, "crashed");
      const setup = new FileSegmentStore(dir);
      const first = await setup.createSegment(start);
      await first.close();
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      const racers = await children(3);
      const acknowledged: SegmentRecord[] = [];
      let doubles = 0;
      let staleTakeovers = 0;
      const errors: Reply[] = [];
      try {
        for (let round = 0; round < RESTORE_ROUNDS; round += 1) {
          // What a writer killed while holding the pod leaves: its lock, naming a process that is gone.
          await writeFile(setup.podLockFile, `${dead}\n${hostname()}\nkilled-in-round-${round}\n`);
          const command = { op: "restore", round, dir, holding: join(root, "crashed-holding") };
          const replies = await Promise.all(racers.map((child) => child.ask(command)));
          errors.push(...unexpected(replies));
          for (const reply of replies) {
            if (!reply.held) continue;
            if (reply.double === true) doubles += 1;
            if (reply.record !== undefined) acknowledged.push(reply.record);
            staleTakeovers += (reply.warnings ?? []).filter((code) => code === "SEGMENT_LOCK_STALE").length;
          }
          expect(staleTakeovers).toBe(round + 1);
        }
      } finally {
        for (const child of racers) child.kill();
      }
      expect(errors).toEqual([]);
      expect(doubles).toBe(0);
      // Every acknowledged append is in the log, once, and nothing else is.
      const { records, warnings } = await setup.readSegment(first.segmentId);
      expect(warnings).toEqual([]);
      expect(records[0]).toEqual(start);
      const key = (record: SegmentRecord) => JSON.stringify(record);
      expect(records.slice(1).map(key).sort()).toEqual(acknowledged.map(key).sort());
      expect(acknowledged.length).toBeGreaterThanOrEqual(RESTORE_ROUNDS);
    },
    SLOW_TEST_TIMEOUT_MS,
  );

  it(
    "two_processes_starting_one_new_pod_one_conversation_every_time",
    async () => {
      const racers = await children(2);
      const problems: string[] = [];
      try {
        for (let round = 0; round < START_ROUNDS; round += 1) {
          const dir = join(root, "new", `pod-${round}`);
          const command = { op: "start", round, dir, holding: join(root, `new-holding-${round}`) };
          const replies = await Promise.all(racers.map((child) => child.ask(command)));
          const held = replies.filter((reply) => reply.held);
          if (unexpected(replies).length > 0) problems.push(`round ${round}: ${JSON.stringify(unexpected(replies))}`);
          if (held.some((reply) => reply.double === true)) problems.push(`round ${round}: two holders at once`);
          const store = new FileSegmentStore(dir);
          const ids = await store.listSegments();
          if (ids.length !== 1) problems.push(`round ${round}: ${ids.length} conversations`);
          if (held.filter((reply) => reply.created === true).length !== 1)
            problems.push(`round ${round}: not one creator`);
          const records = (await store.readSegment(ids[0] ?? "")).records.slice(1);
          if (records.length !== held.length)
            problems.push(`round ${round}: ${records.length} of ${held.length} appends`);
          // Nothing is left behind but the conversation: the lock is released, no temp files.
          const left = await readdir(dir);
          if (left.length !== 1) problems.push(`round ${round}: left ${left.join(", ")}`);
        }
      } finally {
        for (const child of racers) child.kill();
      }
      // The second either came after the first had finished (one conversation, both messages) or was refused.
      expect(problems).toEqual([]);
    },
    SLOW_TEST_TIMEOUT_MS,
  );
});
