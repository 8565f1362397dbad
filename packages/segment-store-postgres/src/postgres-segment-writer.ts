import { randomUUID } from "node:crypto";
import {
  type SegmentRecord,
  SegmentStoreError,
  type SegmentWriter,
  serializeSegmentRecord,
} from "@insomnia/segment-store";
import { causeText, isConnectionError, sleep, sqlState, unavailable } from "./pg-errors.ts";

import type { StoreContext } from "./store-context.ts";

/** An append whose commit was sent but never acknowledged: written or not, still to be learned. */
interface PendingAppend {
  readonly recordId: string;
  readonly json: string;
  readonly seq: number;
}

/** What a writer needs to start: its segment, its lease token and the next sequence number. */
export interface WriterStart {
  readonly segmentId: string;
  readonly segmentNo: string;
  readonly token: string;
  readonly nextSeq: number;
}

/**
 * Appends to one segment as the holder of its lease. Every append goes in one transaction
 * (alone, or with other writers' appends that arrived at the same time: see AppendBatcher)
 * that inserts the record only if this writer's token still holds the segment, so a writer
 * that lost the segment cannot write; appends run one at a time, in call order.
 */
export class PostgresSegmentWriter implements SegmentWriter {
  readonly segmentId: string;
  readonly #ctx: StoreContext;
  readonly #segmentNo: string;
  readonly #onClose: (writer: PostgresSegmentWriter) => Promise<void>;
  #token: string;
  #nextSeq: number;
  #queue: Promise<void> = Promise.resolve();
  #pending: PendingAppend | undefined;
  #fenced: SegmentStoreError | undefined;
  #closing: Promise<void> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(ctx: StoreContext, start: WriterStart, onClose: (writer: PostgresSegmentWriter) => Promise<void>) {
    this.#ctx = ctx;
    this.segmentId = start.segmentId;
    this.#segmentNo = start.segmentNo;
    this.#token = start.token;
    this.#nextSeq = start.nextSeq;
    this.#onClose = onClose;
    // Keeps the lease while the pod is idle (waiting on a model, say); unref'd, so an
    // unclosed writer never keeps the process alive.
    this.#heartbeat = setInterval(() => this.#enqueue(() => this.#renew()).catch(() => undefined), ctx.leaseMs / 3);
    this.#heartbeat.unref();
  }

  /** Number of records in the segment as far as this writer knows (the next sequence number). */
  get length(): number {
    return this.#nextSeq;
  }

  append(record: SegmentRecord): Promise<void> {
    if (this.#closing !== undefined) {
      return Promise.reject(
        new SegmentStoreError(
          "SEGMENT_IO",
          `cannot append to segment ${this.segmentId} of pod ${this.#ctx.podId}: its writer is closed; open the segment again to append`,
          { durable: false },
        ),
      );
    }
    let json: string;
    try {
      json = serializeSegmentRecord(record, this.segmentId, "message");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueue(() => this.#write(json));
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #write(json: string): Promise<void> {
    if (this.#fenced !== undefined) throw this.#fenced;
    if (this.#pending !== undefined) {
      const pending = this.#pending;
      const durable = await this.#resolve(pending);
      if (durable === "unknown") throw this.#unknownError(pending);
      this.#pending = undefined;
      if (durable) {
        this.#nextSeq = pending.seq + 1;
        // The caller is retrying the record whose outcome it was not told: it is written already.
        if (pending.json === json) return;
      }
      if (this.#fenced !== undefined) throw this.#fenced;
    }
    // A connection lost mid-append that provably wrote nothing (the lease moved, the id is
    // absent) is tried once more on a fresh connection: an idle pool's dead connections after
    // a server restart then cost the caller nothing.
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.#attempt(json);
      if (outcome === undefined) return;
      if (attempt >= 2 || this.#fenced !== undefined) throw this.#fenced ?? outcome;
    }
  }

  /** One try at appending `json`: `undefined` when stored, the error when certainly not stored; throws otherwise. */
  async #attempt(json: string): Promise<SegmentStoreError | undefined> {
    const seq = this.#nextSeq;
    const recordId = randomUUID();
    const outcome = await this.#ctx.appends.append({
      podId: this.#ctx.podId,
      segmentNo: this.#segmentNo,
      seq,
      token: this.#token,
      recordId,
      json,
    });
    switch (outcome.kind) {
      case "stored":
        this.#nextSeq = seq + 1;
        return undefined;
      case "not-held":
        throw await this.#fence(seq);
      case "not-sent":
        throw unavailable(this.#what(seq), outcome.error, false);
      case "failed":
        break;
    }
    const failure = outcome.error;
    if (!isConnectionError(failure)) throw this.#refused(seq, failure);
    const pending: PendingAppend = { recordId, json, seq };
    this.#pending = pending;
    const durable = await this.#resolve(pending);
    if (durable === "unknown") throw this.#unknownError(pending, failure);
    this.#pending = undefined;
    if (durable) {
      this.#nextSeq = seq + 1;
      return undefined;
    }
    return this.#fenced ?? unavailable(this.#what(seq), failure, false);
  }

  #what(seq: number): string {
    return `appending record ${seq} to segment ${this.segmentId} of pod ${this.#ctx.podId}`;
  }

  #unknownError(pending: PendingAppend, cause?: unknown): SegmentStoreError {
    return unavailable(this.#what(pending.seq), cause ?? new Error("the database could not be reached"), "unknown");
  }

  #refused(seq: number, cause: unknown): SegmentStoreError {
    const state = sqlState(cause);
    if (state === "23505" || state === "23503") {
      // The key or the previous-record link refused the sequence number: someone else wrote here.
      this.#fenced = new SegmentStoreError(
        "SEGMENT_FENCED",
        `${this.#what(seq)}: the database refused record ${seq} (${causeText(cause)}); another writer has written to ` +
          "this segment, so this writer accepts no more records — nothing was written; open the segment again to continue",
        { cause, durable: false },
      );
      return this.#fenced;
    }
    return new SegmentStoreError(
      "SEGMENT_IO",
      `${this.#what(seq)}: PostgreSQL refused the append (${causeText(cause)}); nothing was written`,
      { cause, durable: false },
    );
  }

  async #fence(seq: number): Promise<SegmentStoreError> {
    let who = "another writer";
    try {
      const { rows } = await this.#ctx.pool.query<{
        held: boolean;
        writer_host: string | null;
        writer_pid: number | null;
      }>(this.#ctx.sql.holder, [this.#ctx.podId, this.#segmentNo]);
      const row = rows[0];
      if (row?.held === true) who = `process ${row.writer_pid ?? "?"} on ${row.writer_host ?? "?"}`;
      else if (row !== undefined) who = "another writer (since closed)";
    } catch {
      // The message only loses its detail.
    }
    this.#fenced = new SegmentStoreError(
      "SEGMENT_FENCED",
      `${this.#what(seq)}: this writer lost segment ${this.segmentId} to ${who} (its lease of ${this.#ctx.leaseMs} ms ` +
        "ran out and the segment was taken over); nothing was written. Open the segment again to continue from what is stored",
      { durable: false },
    );
    return this.#fenced;
  }

  /**
   * Learns whether `pending` was committed. First moves the lease to a new token: that waits
   * for the lost statement's transaction (it holds the segment row) and makes sure it can no
   * longer commit if it has not yet run; then looks the record up by its id. Retries until
   * `resolveTimeoutMs` is spent; `"unknown"` when the database stayed out of reach.
   */
  async #resolve(pending: PendingAppend): Promise<boolean | "unknown"> {
    const deadline = Date.now() + this.#ctx.resolveTimeoutMs;
    const { sql, podId, leaseMs, pool } = this.#ctx;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      try {
        const token = randomUUID();
        const rotated = await pool.query(sql.rotate, [podId, this.#segmentNo, this.#token, token, leaseMs]);
        if (rotated.rowCount === 1) this.#token = token;
        const found = await pool.query<{ ours: boolean }>(sql.findRecord, [
          podId,
          this.#segmentNo,
          pending.seq,
          pending.recordId,
        ]);
        if (rotated.rowCount !== 1 && this.#fenced === undefined) await this.#fence(pending.seq);
        // Another record at that place means another writer got there: ours is not stored.
        return found.rows[0]?.ours === true;
      } catch (error) {
        if (!isConnectionError(error)) throw unavailable(this.#what(pending.seq), error, "unknown");
      }
      if (Date.now() + delay > deadline) return "unknown";
      await sleep(delay);
    }
  }

  async #renew(): Promise<void> {
    if (this.#fenced !== undefined || this.#pending !== undefined || this.#closing !== undefined) return;
    const { sql, podId, leaseMs, pool } = this.#ctx;
    const { rowCount } = await pool.query(sql.renew, [podId, this.#segmentNo, this.#token, leaseMs]);
    if (rowCount !== 1) await this.#fence(this.#nextSeq);
  }

  /** Waits for pending appends, then gives the leases back (if the database is out of reach, they run out by themselves). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
      await this.#queue;
      if (this.#fenced === undefined) {
        const { sql, podId, pool } = this.#ctx;
        await pool.query(sql.release, [podId, this.#segmentNo, this.#token]).catch(() => undefined);
      }
      // The store gives the pod's lease back after the segment's, when this was its last writer.
      await this.#onClose(this);
    })();
    return this.#closing;
  }
}
