import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { compareSegmentIds } from "../segment-id.ts";
import type { SegmentRecord, SegmentStartRecord } from "../segment-record.ts";
import type { PodWriterLock, SegmentStore } from "../segment-store.ts";
import { SegmentStoreError } from "../segment-store-error.ts";

/** Ways to damage a store's backing data the way a crash or a bad disk would. */
export interface SegmentStoreDamage {
  /**
   * Leaves the backing data of `segmentId` as an append interrupted after its last
   * acknowledged record would (a partial record that was never acknowledged).
   */
  corruptTail(segmentId: string): Promise<void>;
  /**
   * Damages acknowledged record `seq` (0 is the segment_start) of `segmentId` while the
   * records after it stay in place; the file store flips the newline that ends the record.
   */
  corruptMiddle(segmentId: string, seq: number): Promise<void>;
  /**
   * Leaves the lock of `segmentId` as a writer killed while taking or releasing it would
   * (the file store: an empty lock file).
   */
  crashedLock(segmentId: string): Promise<void>;
  /** An exact copy of the backing data of `segmentId` (bytes, rows…), compared with `toEqual`. */
  snapshot(segmentId: string): Promise<unknown>;
}

/**
 * How another worker_thread opens a store over the same backing data: the worker imports
 * `module` (plain JavaScript, no TypeScript loader) and awaits `module[export](args)`.
 */
export interface WorkerThreadStore {
  /** Absolute path or `file:` URL of an ES module. */
  readonly module: string;
  /** Name of the export that opens the store (default `openStore`). */
  readonly export?: string;
  /** Structured-cloneable argument of that export. */
  readonly args?: unknown;
}

/** One fresh, empty store for one test, with what the suite needs around it. */
export interface SegmentStoreHarness {
  /** A new, empty store. */
  readonly store: SegmentStore;
  /** A new store instance over the same backing data (a restart of the process that used `store`). */
  readonly reopen?: () => Promise<SegmentStore>;
  /** Removes everything the harness made (directories, schemas, pools); called after every test. */
  readonly cleanup: () => Promise<void>;
  /** Damage hooks; each one missing must be named in {@link ConformanceOptions.skip}. */
  readonly damage?: Partial<SegmentStoreDamage>;
  /** Opens the same store in another worker_thread (see {@link WorkerThreadStore}). */
  readonly workerThread?: WorkerThreadStore;
}

/** Makes a fresh harness; called once per test, so it may start servers, create schemas, etc. */
export type SegmentStoreFactory = () => Promise<SegmentStoreHarness>;

/** A part of the contract that needs something from the harness. */
export type ConformanceCapability =
  | "reopen"
  | "corruptTail"
  | "corruptMiddle"
  | "crashedLock"
  | "snapshot"
  | "workerThread";

/** Options of {@link describeSegmentStoreConformance}. */
export interface ConformanceOptions {
  /**
   * Capabilities the store does not have, each with the reason; the tests that need one are
   * registered as skipped. A needed hook that is neither given nor skipped fails its test.
   */
  readonly skip?: Partial<Record<ConformanceCapability, string>>;
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

/** The SegmentStoreError a promise rejects with (anything else is rethrown; resolving fails the test). */
async function rejection(promise: Promise<unknown>): Promise<SegmentStoreError> {
  try {
    await promise;
  } catch (error) {
    if (SegmentStoreError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection with a SegmentStoreError");
}

function need<T>(value: T | undefined, capability: ConformanceCapability): T {
  if (value === undefined) {
    throw new Error(
      `the harness gives no "${capability}"; implement it, or name it in options.skip with the reason the store has none`,
    );
  }
  return value;
}

type Reply =
  | { readonly ok: true; readonly records?: number; readonly segmentId?: string }
  | { readonly ok: false; readonly code?: string; readonly message: string };

// Runs in the other worker_thread: opens the store through the harness's module and answers
// one command at a time. A CommonJS script string, so no file has to ship next to the suite.
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
let store;
let writer;
parentPort.on("message", async (command) => {
  try {
    if (command.op === "start") {
      const module = await import(workerData.module);
      store = await module[workerData.exportName](workerData.args);
      parentPort.postMessage({ ok: true });
    } else if (command.op === "open") {
      const opened = await store.openSegment(command.segmentId);
      writer = opened.writer;
      parentPort.postMessage({ ok: true, records: opened.records.length });
    } else if (command.op === "create") {
      writer = await store.createSegment(command.start);
      parentPort.postMessage({ ok: true, segmentId: writer.segmentId });
    } else if (command.op === "append") {
      await writer.append(command.record);
      parentPort.postMessage({ ok: true });
    } else if (command.op === "close") {
      await writer?.close();
      writer = undefined;
      parentPort.postMessage({ ok: true });
    }
  } catch (error) {
    parentPort.postMessage({
      ok: false,
      code: typeof error?.code === "string" ? error.code : undefined,
      message: String(error?.stack ?? error),
    });
  }
});
`;

/** A store in another worker_thread of this process, driven one command at a time. */
class ThreadStore {
  readonly #worker: Worker;
  #failure: Error | undefined;

  constructor(spec: WorkerThreadStore) {
    const module = spec.module.startsWith("file:") ? spec.module : pathToFileURL(spec.module).href;
    this.#worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { module, exportName: spec.export ?? "openStore", args: spec.args },
    });
    this.#worker.on("error", (error) => {
      this.#failure = error;
    });
    this.#worker.on("exit", (code) => {
      this.#failure ??= new Error(`the other thread exited (code ${code})`);
    });
  }

  send(command: Record<string, unknown>): Promise<Reply> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      const stop = (): void => {
        this.#worker.off("message", onMessage);
        this.#worker.off("error", onError);
        this.#worker.off("exit", onExit);
      };
      const onError = (error: Error): void => {
        stop();
        reject(error);
      };
      const onExit = (code: number): void => {
        stop();
        reject(new Error(`the other thread exited (code ${code}) before it answered ${String(command.op)}`));
      };
      const onMessage = (reply: Reply): void => {
        stop();
        resolve(reply);
      };
      this.#worker.on("message", onMessage);
      this.#worker.on("error", onError);
      this.#worker.on("exit", onExit);
      this.#worker.postMessage(command);
    });
  }

  async expectOk(command: Record<string, unknown>): Promise<Reply & { ok: true }> {
    const reply = await this.send(command);
    if (!reply.ok) throw new Error(`the other thread failed ${String(command.op)}: ${reply.message}`);
    return reply;
  }

  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }
}

/**
 * Registers, inside a `describe(name)`, vitest tests for everything the {@link SegmentStore}
 * interface promises: ordering, durability on acknowledgment, listing, restore, torn-tail
 * recovery, mid-segment corruption, the single writer (also across instances and
 * worker_threads), one writer per pod (creating, compacting and deciding under `lockPod()`),
 * lock debris of a crashed writer, and plain-JSON records. Every store runs
 * it unchanged in its own tests; see the package README for the harness contract.
 */
export function describeSegmentStoreConformance(
  name: string,
  factory: SegmentStoreFactory,
  options: ConformanceOptions = {},
): void {
  const skip = options.skip ?? {};

  /** A test that gets a fresh harness and always cleans it up; skipped when a capability it needs is. */
  const test = (
    title: string,
    needs: readonly ConformanceCapability[],
    body: (harness: SegmentStoreHarness) => Promise<void>,
  ): void => {
    const skipped = needs.filter((capability) => skip[capability] !== undefined);
    if (skipped.length > 0) {
      it.skip(`${title} (skipped: ${skipped.map((capability) => skip[capability]).join("; ")})`, () => {});
      return;
    }
    it(title, async () => {
      const harness = await factory();
      try {
        await body(harness);
      } finally {
        await harness.cleanup();
      }
    });
  };

  describe(name, () => {
    describe("records and ordering", () => {
      test("round_trips_start_and_messages", [], async ({ store }) => {
        const writer = await store.createSegment(start);
        for (let n = 0; n < 5; n += 1) await writer.append(message(n));
        await writer.close();
        const { records, warnings } = await store.readSegment(writer.segmentId);
        expect(records).toEqual([start, message(0), message(1), message(2), message(3), message(4)]);
        expect(warnings).toEqual([]);
      });

      test("keeps_optional_start_fields_and_continues_after_reopen", [], async ({ store }) => {
        const first = await store.createSegment(start);
        await first.close();
        const compacted: SegmentStartRecord = {
          ...start,
          previousSegment: first.segmentId,
          summary: "earlier: ひとこと",
        };
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

      test("appends_in_call_order_without_awaiting", [], async ({ store }) => {
        const writer = await store.createSegment(start);
        const expected = Array.from({ length: 40 }, (_, n) => message(n));
        await Promise.all(expected.map((record) => writer.append(record)));
        await writer.close();
        expect((await store.readSegment(writer.segmentId)).records).toEqual([start, ...expected]);
      });

      test("close_is_idempotent_and_append_after_close_fails", [], async ({ store }) => {
        const writer = await store.createSegment(start);
        const pending = writer.append(message(0));
        const closing = writer.close();
        await pending;
        await closing;
        await writer.close();
        const error = await rejection(writer.append(message(1)));
        expect(error.code).toBe("SEGMENT_IO");
        expect(error.message).toMatch(/closed/);
        expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
      });

      test("rejects_non_message_or_non_json_records_and_keeps_the_segment", [], async ({ store }) => {
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
          expect((await rejection(writer.append(record as SegmentRecord))).code).toBe("INVALID_ARGUMENT");
        }
        await writer.append(message(0));
        await writer.close();
        expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
        for (const notStart of [message(0), { ...start, sources: [{ ref: "$user/x" }] }]) {
          const error = await rejection(store.createSegment(notStart as SegmentStartRecord));
          expect(error.code).toBe("INVALID_ARGUMENT");
        }
        expect(await store.listSegments()).toEqual([writer.segmentId]);
      });

      test("values_that_are_not_plain_json_are_refused_so_what_is_read_is_what_was_appended", [], async ({ store }) => {
        class Point {
          x = 1;
        }
        const sparse: unknown[] = [];
        sparse[2] = 1;
        const writer = await store.createSegment(start);
        const inputs: [string, unknown][] = [
          ["NaN", Number.NaN],
          ["Infinity", Number.POSITIVE_INFINITY],
          ["a Map", new Map([["a", 1]])],
          ["a Set", new Set([1])],
          ["a Date", new Date(0)],
          ["a class instance", new Point()],
          ["a BigInt", 1n],
          ["a function", () => 1],
          ["a symbol", Symbol("s")],
          ["undefined in an array", [1, undefined]],
          ["a hole in an array", sparse],
        ];
        for (const [what, input] of inputs) {
          const record = {
            type: "message",
            message: { role: "assistant", content: "", toolCalls: [{ id: "c", name: "t", input: { value: input } }] },
          } as SegmentRecord;
          const error = await rejection(writer.append(record));
          expect([what, error.code]).toEqual([what, "INVALID_ARGUMENT"]);
          expect(error.message).toMatch(/plain JSON/);
        }
        // Plain JSON, including an own property that is undefined (absent, as in JSON), is kept as is.
        const plain = {
          type: "message" as const,
          message: { n: -1.5e-7, s: "\u2028", a: [null, true, {}], o: Object.assign(Object.create(null), { k: 1 }) },
        };
        await writer.append(plain);
        await writer.append({ type: "message", message: { kept: 1, absent: undefined } });
        await writer.close();
        expect((await store.readSegment(writer.segmentId)).records).toEqual([
          start,
          { type: "message", message: { n: -1.5e-7, s: "\u2028", a: [null, true, {}], o: { k: 1 } } },
          { type: "message", message: { kept: 1 } },
        ]);
      });

      test("returns_copies_that_callers_may_mutate", [], async ({ store }) => {
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

    describe("listing", () => {
      test("lists_segments_oldest_first", [], async ({ store }) => {
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

      test("missing_or_malformed_segment_id_is_not_found", [], async ({ store }) => {
        for (const id of ["seg-0000000099", "../etc/passwd", "seg-1", ""]) {
          expect((await rejection(store.readSegment(id))).code).toBe("SEGMENT_NOT_FOUND");
          expect((await rejection(store.openSegment(id))).code).toBe("SEGMENT_NOT_FOUND");
        }
      });

      test("a_new_instance_lists_the_same_segments_and_new_ids_sort_after_them", ["reopen"], async (harness) => {
        const { store } = harness;
        const ids: string[] = [];
        for (let n = 0; n < 3; n += 1) {
          const writer = await store.createSegment(start);
          ids.push(writer.segmentId);
          await writer.close();
        }
        const again = await need(harness.reopen, "reopen")();
        expect(await again.listSegments()).toEqual(ids);
        expect(await again.latestSegment()).toBe(ids[2]);
        const next = await again.createSegment(start);
        await next.close();
        expect(compareSegmentIds(ids[2] ?? "", next.segmentId)).toBeLessThan(0);
        expect(await store.listSegments()).toEqual([...ids, next.segmentId]);
      });
    });

    describe("durability and restore", () => {
      test("acknowledged_records_are_read_back_by_a_new_store_instance", ["reopen"], async (harness) => {
        const writer = await harness.store.createSegment(start);
        const acknowledged: SegmentRecord[] = [start];
        for (let n = 0; n < 6; n += 1) {
          await writer.append(message(n));
          acknowledged.push(message(n));
          // Read back while the writer is still open (nothing closed, nothing flushed by close).
          const again = await need(harness.reopen, "reopen")();
          expect((await again.readSegment(writer.segmentId)).records).toEqual(acknowledged);
        }
        await writer.close();
      });

      test(
        "restore_opens_the_latest_segment_with_every_acknowledged_record_and_appends_after_them",
        ["reopen"],
        async (harness) => {
          const first = await harness.store.createSegment(start);
          await first.append(message(0));
          await first.close();
          const compacted: SegmentStartRecord = { ...start, previousSegment: first.segmentId, summary: "s" };
          const second = await harness.store.createSegment(compacted);
          await second.append(message(1));
          await second.append(message(2));
          await second.close();
          const restarted = await need(harness.reopen, "reopen")();
          const latest = await restarted.latestSegment();
          expect(latest).toBe(second.segmentId);
          const opened = await restarted.openSegment(latest ?? "");
          expect(opened.records).toEqual([compacted, message(1), message(2)]);
          expect(opened.warnings).toEqual([]);
          await opened.writer.append(message(3));
          await opened.writer.close();
          expect((await harness.store.readSegment(second.segmentId)).records).toEqual([
            compacted,
            message(1),
            message(2),
            message(3),
          ]);
          expect((await restarted.readSegment(first.segmentId)).records).toEqual([start, message(0)]);
        },
      );
    });

    describe("torn tails and corruption", () => {
      test(
        "torn_tail_is_cut_back_to_the_last_whole_record_with_a_warning",
        ["corruptTail", "snapshot"],
        async (harness) => {
          const { store } = harness;
          const damage = harness.damage ?? {};
          const writer = await store.createSegment(start);
          for (let n = 0; n < 3; n += 1) await writer.append(message(n));
          await writer.close();
          const id = writer.segmentId;
          await need(damage.corruptTail, "corruptTail")(id);
          const snapshot = need(damage.snapshot, "snapshot");
          const damaged = await snapshot(id);
          const whole = [start, message(0), message(1), message(2)];
          const read = await store.readSegment(id);
          expect(read.records).toEqual(whole);
          expect(read.warnings.map((warning) => warning.code)).toEqual(["SEGMENT_TAIL_RECOVERED"]);
          const strict = await rejection(store.openSegment(id, { recoverTail: false }));
          expect(strict.code).toBe("SEGMENT_CORRUPT");
          expect(await snapshot(id)).toEqual(damaged);
          const opened = await store.openSegment(id);
          expect(opened.records).toEqual(whole);
          expect(opened.warnings.map((warning) => warning.code)).toEqual(["SEGMENT_TAIL_RECOVERED"]);
          await opened.writer.append(message(3));
          await opened.writer.close();
          expect(await store.readSegment(id)).toEqual({ records: [...whole, message(3)], warnings: [] });
        },
      );

      test("damage_followed_by_more_records_is_corrupt_and_kept", ["corruptMiddle", "snapshot"], async (harness) => {
        const { store } = harness;
        const damage = harness.damage ?? {};
        const corruptMiddle = need(damage.corruptMiddle, "corruptMiddle");
        const snapshot = need(damage.snapshot, "snapshot");
        // The second-to-last record (its damage must not pass for a torn append), then the first message.
        for (const seq of [4, 1]) {
          const writer = await store.createSegment(start);
          for (let n = 0; n < 5; n += 1) await writer.append(message(n));
          await writer.close();
          const id = writer.segmentId;
          await corruptMiddle(id, seq);
          const damaged = await snapshot(id);
          for (const attempt of [() => store.readSegment(id), () => store.openSegment(id)]) {
            const error = await rejection(attempt());
            expect([seq, error.code]).toEqual([seq, "SEGMENT_CORRUPT"]);
          }
          expect(await snapshot(id)).toEqual(damaged);
          // Not locked afterwards: a later open fails the same way, not with SEGMENT_LOCKED.
          expect((await rejection(store.openSegment(id))).code).toBe("SEGMENT_CORRUPT");
        }
      });
    });

    describe("single writer", () => {
      test("second_writer_is_locked_until_the_first_closes", [], async ({ store }) => {
        const writer = await store.createSegment(start);
        const locked = await rejection(store.openSegment(writer.segmentId));
        expect(locked.code).toBe("SEGMENT_LOCKED");
        await writer.append(message(0));
        const opened = await store.openSegment(writer.segmentId).catch((error: unknown) => error);
        expect(SegmentStoreError.is(opened) && opened.code).toBe("SEGMENT_LOCKED");
        await writer.close();
        const reopened = await store.openSegment(writer.segmentId);
        expect(reopened.records).toEqual([start, message(0)]);
        expect((await rejection(store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
        await reopened.writer.close();
      });

      test("concurrent_creates_get_distinct_ids_and_concurrent_opens_one_writer", [], async ({ store }) => {
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
        expect(refused.map((error) => SegmentStoreError.is(error) && error.code)).toEqual([
          "SEGMENT_LOCKED",
          "SEGMENT_LOCKED",
          "SEGMENT_LOCKED",
        ]);
        await opened[0]?.writer.close();
      });

      test("reads_without_the_lock_while_a_writer_is_open", [], async ({ store }) => {
        const writer = await store.createSegment(start);
        await writer.append(message(0));
        expect((await store.readSegment(writer.segmentId)).records).toEqual([start, message(0)]);
        await writer.close();
      });

      test("second_writer_through_another_instance_is_locked", ["reopen"], async (harness) => {
        const writer = await harness.store.createSegment(start);
        const other = await need(harness.reopen, "reopen")();
        expect((await rejection(other.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
        await writer.append(message(0));
        await writer.close();
        const opened = await other.openSegment(writer.segmentId);
        expect(opened.records).toEqual([start, message(0)]);
        expect((await rejection(harness.store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
        await opened.writer.close();
      });

      test("two_writers_in_two_worker_threads_second_is_locked", ["workerThread"], async (harness) => {
        const { store } = harness;
        const writer = await store.createSegment(start);
        await writer.append(message(0));
        const thread = new ThreadStore(need(harness.workerThread, "workerThread"));
        try {
          await thread.expectOk({ op: "start" });
          // This thread holds the segment: the other thread must not get it.
          const refused = await thread.send({ op: "open", segmentId: writer.segmentId });
          expect(refused.ok ? "opened" : refused.code).toBe("SEGMENT_LOCKED");
          await writer.append(message(1));
          await writer.close();
          // The other thread holds it now: this thread must not get it.
          const opened = await thread.expectOk({ op: "open", segmentId: writer.segmentId });
          expect(opened.records).toBe(3);
          await thread.expectOk({ op: "append", record: message(2) });
          expect((await rejection(store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
          await thread.expectOk({ op: "close" });
          const mine = await store.openSegment(writer.segmentId);
          expect(mine.records).toEqual([start, message(0), message(1), message(2)]);
          expect(mine.warnings).toEqual([]);
          await mine.writer.close();
        } finally {
          await thread.terminate();
        }
      });

      test("lock_debris_of_a_crashed_writer_does_not_block_restore", ["crashedLock"], async (harness) => {
        const { store } = harness;
        const writer = await store.createSegment(start);
        await writer.append(message(0));
        await writer.close();
        await need(harness.damage?.crashedLock, "crashedLock")(writer.segmentId);
        const opened = await store.openSegment(writer.segmentId);
        expect(opened.records).toEqual([start, message(0)]);
        expect(opened.warnings.every((warning) => warning.code === "SEGMENT_LOCK_STALE")).toBe(true);
        // Taken over for real: a second writer is refused again.
        expect((await rejection(store.openSegment(writer.segmentId))).code).toBe("SEGMENT_LOCKED");
        await opened.writer.close();
      });
    });

    describe("one writer per pod", () => {
      test("another_instance_can_neither_create_nor_open_while_the_pod_has_a_writer", ["reopen"], async (harness) => {
        const first = await harness.store.createSegment(start);
        await first.append(message(0));
        const other = await need(harness.reopen, "reopen")();
        // Starting the pod anew (`--new`), restoring it, or fencing a decision: all refused, nothing written.
        expect((await rejection(other.createSegment(start))).code).toBe("SEGMENT_LOCKED");
        expect((await rejection(other.openSegment(first.segmentId))).code).toBe("SEGMENT_LOCKED");
        expect((await rejection(other.lockPod())).code).toBe("SEGMENT_LOCKED");
        expect(await other.listSegments()).toEqual([first.segmentId]);
        await first.close();
        const second = await other.createSegment(start);
        expect((await rejection(harness.store.createSegment(start))).code).toBe("SEGMENT_LOCKED");
        await second.close();
        expect(await harness.store.listSegments()).toEqual([first.segmentId, second.segmentId]);
      });

      test("compaction_by_the_holder_is_allowed_and_by_another_instance_fenced", ["reopen"], async (harness) => {
        const writer = await harness.store.createSegment(start);
        await writer.append(message(0));
        await writer.close();
        const restored = await harness.store.openSegment(writer.segmentId);
        const other = await need(harness.reopen, "reopen")();
        const compacted: SegmentStartRecord = { ...start, previousSegment: writer.segmentId, summary: "s" };
        expect((await rejection(other.createSegment(compacted))).code).toBe("SEGMENT_LOCKED");
        // The holder compacts: the new segment is created while the old writer is still open.
        const next = await harness.store.createSegment(compacted);
        await restored.writer.close();
        expect((await rejection(other.openSegment(next.segmentId))).code).toBe("SEGMENT_LOCKED");
        await next.append(message(1));
        await next.close();
        expect(await other.listSegments()).toEqual([writer.segmentId, next.segmentId]);
        expect((await other.readSegment(next.segmentId)).records).toEqual([compacted, message(1)]);
      });

      test(
        "lock_pod_lets_exactly_one_of_two_instances_decide_and_the_other_continues_it",
        ["reopen"],
        async (harness) => {
          const reopen = need(harness.reopen, "reopen");
          for (let round = 0; round < 5; round += 1) {
            const stores = [round === 0 ? harness.store : await reopen(), await reopen()];
            const locks = await Promise.allSettled(stores.map((store) => store.lockPod()));
            const held = locks.flatMap((result, i) => (result.status === "fulfilled" ? [i] : []));
            expect(held).toHaveLength(1);
            for (const result of locks) {
              if (result.status === "rejected") {
                expect(SegmentStoreError.is(result.reason) && result.reason.code).toBe("SEGMENT_LOCKED");
              }
            }
            const winner = stores[held[0] ?? 0] as SegmentStore;
            const lock = (locks[held[0] ?? 0] as PromiseFulfilledResult<PodWriterLock>).value;
            // Under the lock: continue the latest conversation, or start the first one.
            const latest = await winner.latestSegment();
            const writer =
              latest === undefined ? await winner.createSegment(start) : (await winner.openSegment(latest)).writer;
            await writer.append(message(round));
            await writer.close();
            await lock.release();
            await lock.release();
          }
          const ids = await harness.store.listSegments();
          expect(ids).toHaveLength(1);
          expect((await harness.store.readSegment(ids[0] ?? "")).records).toEqual([
            start,
            message(0),
            message(1),
            message(2),
            message(3),
            message(4),
          ]);
        },
      );

      test("lock_pod_is_held_until_released_and_every_writer_closed", ["reopen"], async (harness) => {
        const lock = await harness.store.lockPod();
        expect(lock.warnings).toEqual([]);
        const other = await need(harness.reopen, "reopen")();
        expect((await rejection(other.lockPod())).code).toBe("SEGMENT_LOCKED");
        const writer = await harness.store.createSegment(start);
        await lock.release();
        expect((await rejection(other.createSegment(start))).code).toBe("SEGMENT_LOCKED");
        await writer.close();
        const taken = await other.lockPod();
        expect((await rejection(harness.store.lockPod())).code).toBe("SEGMENT_LOCKED");
        await taken.release();
        expect(await other.listSegments()).toEqual([writer.segmentId]);
      });

      test("a_stale_pod_lock_is_taken_over_by_lock_pod_with_a_warning", ["reopen", "crashedLock"], async (harness) => {
        const writer = await harness.store.createSegment(start);
        await writer.close();
        await need(harness.damage?.crashedLock, "crashedLock")(writer.segmentId);
        const other = await need(harness.reopen, "reopen")();
        const results = await Promise.allSettled([other.lockPod(), harness.store.lockPod()]);
        const held = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
        expect(held).toHaveLength(1);
        expect(held[0]?.warnings.every((warning) => warning.code === "SEGMENT_LOCK_STALE")).toBe(true);
        await held[0]?.release();
      });

      test("a_writer_in_another_thread_fences_creating_a_segment_here", ["workerThread"], async (harness) => {
        const thread = new ThreadStore(need(harness.workerThread, "workerThread"));
        try {
          await thread.expectOk({ op: "start" });
          const created = await thread.expectOk({ op: "create", start });
          expect((await rejection(harness.store.createSegment(start))).code).toBe("SEGMENT_LOCKED");
          expect((await rejection(harness.store.lockPod())).code).toBe("SEGMENT_LOCKED");
          expect(await harness.store.listSegments()).toEqual([created.segmentId]);
          await thread.expectOk({ op: "close" });
          const mine = await harness.store.createSegment(start);
          const refused = await thread.send({ op: "create", start });
          expect(refused.ok ? "created" : refused.code).toBe("SEGMENT_LOCKED");
          await mine.close();
        } finally {
          await thread.terminate();
        }
      });
    });
  });
}
