import type { Pool, PoolClient } from "pg";
import { NOT_HELD_STATE } from "./migrations.ts";
import { PerPoolAndSchema } from "./per-pool-and-schema.ts";
import { isConnectionError, sqlState } from "./pg-errors.ts";

/** One append as the writer hands it over: the record goes in at `seq` only while `token` holds the segment. */
export interface AppendRequest {
  readonly podId: string;
  readonly segmentNo: string;
  readonly seq: number;
  readonly token: string;
  readonly recordId: string;
  readonly json: string;
}

/**
 * What became of an append:
 * - `stored`: committed.
 * - `not-held`: the token no longer holds the segment; nothing was written.
 * - `not-sent`: no connection could be had; nothing was sent.
 * - `failed`: the statement failed with `error`; a connection error leaves the outcome to be
 *   learned (the commit may have happened), any other error means nothing was written.
 */
export type AppendOutcome =
  | { readonly kind: "stored" }
  | { readonly kind: "not-held" }
  | { readonly kind: "not-sent"; readonly error: unknown }
  | { readonly kind: "failed"; readonly error: unknown };

interface Queued {
  readonly request: AppendRequest;
  readonly settle: (outcome: AppendOutcome) => void;
  /** Order of arrival: a failed connection request fails only the appends that were waiting when it was made. */
  readonly ticket: number;
}

/** The SQL the batcher sends: one append (`$1…$6`) and many (six arrays, the bodies as one JSON array). */
export interface AppendStatements {
  readonly append: string;
  readonly appendMany: string;
}

/** Most appends sent in one statement, and most characters of their JSON (a larger record still goes, alone). */
export const MAX_BATCH_RECORDS = 32;
export const MAX_BATCH_JSON_CHARS: number = 1 << 20;

const STORED: AppendOutcome = { kind: "stored" };
const NOT_HELD: AppendOutcome = { kind: "not-held" };

/** Reads the batch's answer as the server's text, whatever type parsers the application installed. */
const AS_TEXT = { getTypeParser: () => (value: string) => value };

/**
 * The stored positions in `answer` (an `integer[]` as text, or NULL for none), or `undefined`
 * when it is not a well-formed answer for `count` appends.
 */
export function storedPositions(answer: unknown, count: number): Set<number> | undefined {
  if (answer === null) return new Set();
  if (typeof answer !== "string" || !/^\{[1-9][0-9]{0,5}(,[1-9][0-9]{0,5})*\}$/.test(answer)) return undefined;
  const positions = answer.slice(1, -1).split(",").map(Number);
  const set = new Set(positions);
  return set.size === positions.length && positions.every((n) => n <= count) ? set : undefined;
}

/**
 * Group commit for the writers that share one pool and schema. An append is sent at once when
 * a connection is free; appends that arrive while all of the batcher's connections are busy
 * wait, and the next connection takes all of them (up to {@link MAX_BATCH_RECORDS}) in one
 * statement, one transaction, one WAL flush. A lone writer's appends therefore never wait for
 * a batch; a hundred pods on a pool of ten share commits instead of queueing for them.
 *
 * Every append in a batch is still all-or-nothing and checked as alone: the token of each is
 * checked against its own segment row (locked until commit), and the primary key and the
 * `prev_seq` foreign key check each record. A batch the database refuses as a whole (one
 * record it will not take: a duplicate or a gap, i.e. another writer was there) is rolled
 * back and each of its appends is sent again alone, so only the refused one fails.
 */
export class AppendBatcher {
  readonly #pool: Pool;
  readonly #sql: AppendStatements;
  readonly #queue: Queued[] = [];
  /** Connections asked for or held by the batcher (at most the pool's size). */
  #inFlight = 0;
  /** Of those, the ones still waiting for the pool: each will take a batch when it comes. */
  #connecting = 0;
  /** Appends queued so far (the last one's ticket). */
  #tickets = 0;

  constructor(pool: Pool, sql: AppendStatements) {
    this.#pool = pool;
    this.#sql = sql;
    // An ending pool removes its clients as they come back; then what waits here learns it.
    pool.on("remove", () => {
      if (pool.ending) this.#pump();
    });
  }

  /** Sends `request` (alone or with others waiting at the same time); never rejects. */
  append(request: AppendRequest): Promise<AppendOutcome> {
    return new Promise((settle) => {
      this.#tickets += 1;
      this.#queue.push({ request, settle, ticket: this.#tickets });
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#pool.ending || this.#pool.ended) {
      // pg-pool never answers the connection requests still waiting when end() is called, so
      // nothing may wait behind them: what is queued fails now, as a closed pool's query would.
      const error = new Error("Cannot use a pool after calling end on the pool");
      for (const queued of this.#queue.splice(0)) queued.settle({ kind: "not-sent", error });
      return;
    }
    const limit = Math.max(1, this.#pool.options.max ?? 10);
    while (this.#queue.length > this.#connecting && this.#inFlight < limit) {
      this.#inFlight += 1;
      this.#connecting += 1;
      void this.#sendNext().finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
    }
  }

  async #sendNext(): Promise<void> {
    const askedAt = this.#tickets;
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#connecting -= 1;
      // The appends that were waiting when this connection was asked for fail with it (a
      // connection refused, `connectionTimeoutMillis`); later ones get requests of their own.
      for (const queued of this.#take(askedAt)) queued.settle({ kind: "not-sent", error });
      return;
    }
    this.#connecting -= 1;
    const batch = this.#take();
    if (batch.length === 0) {
      // An earlier connection took them all.
      client.release();
      return;
    }
    let broken: Error | undefined;
    try {
      broken =
        batch.length === 1 ? await this.#sendOne(client, batch[0] as Queued) : await this.#sendMany(client, batch);
    } finally {
      // A refusal leaves the connection healthy; only a broken one is dropped from the pool.
      client.release(broken);
    }
  }

  /** The appends waiting now (those with a ticket up to `upTo`), oldest first, up to the batch limits. */
  #take(upTo = this.#tickets): Queued[] {
    let chars = 0;
    let n = 0;
    while (n < this.#queue.length && n < MAX_BATCH_RECORDS && (this.#queue[n] as Queued).ticket <= upTo) {
      chars += (this.#queue[n] as Queued).request.json.length;
      if (n > 0 && chars > MAX_BATCH_JSON_CHARS) break;
      n += 1;
    }
    return this.#queue.splice(0, n);
  }

  /** Sends one append; returns the error that broke the connection, if one did. */
  async #sendOne(client: PoolClient, queued: Queued): Promise<Error | undefined> {
    const { podId, segmentNo, seq, token, recordId, json } = queued.request;
    try {
      await client.query(this.#sql.append, [podId, segmentNo, seq, token, recordId, json]);
      queued.settle(STORED);
      return undefined;
    } catch (error) {
      queued.settle(sqlState(error) === NOT_HELD_STATE ? NOT_HELD : { kind: "failed", error });
      return isConnectionError(error) ? (error as Error) : undefined;
    }
  }

  async #sendMany(client: PoolClient, batch: readonly Queued[]): Promise<Error | undefined> {
    const requests = batch.map((queued) => queued.request);
    let stored: Set<number> | undefined;
    try {
      const { rows } = await client.query<{ stored: unknown }>({
        text: this.#sql.appendMany,
        types: AS_TEXT,
        values: [
          requests.map((r) => r.podId),
          requests.map((r) => r.segmentNo),
          requests.map((r) => r.seq),
          requests.map((r) => r.token),
          requests.map((r) => r.recordId),
          // The bodies as one JSON array of the records' own text: nothing to escape, and the
          // server keeps each element's text as it is.
          `[${requests.map((r) => r.json).join(",")}]`,
        ],
      });
      stored = rows.length === 1 ? storedPositions(rows[0]?.stored, batch.length) : undefined;
    } catch (error) {
      if (isConnectionError(error)) {
        for (const queued of batch) queued.settle({ kind: "failed", error });
        return error as Error;
      }
      // Refused as a whole, so nothing of it was written: each goes again alone, and only the
      // one the database will not take fails.
      for (const [i, queued] of batch.entries()) {
        const broken = await this.#sendOne(client, queued);
        if (broken !== undefined) {
          // The rest were only in the refused batch: they wait for the next connection, first.
          this.#queue.unshift(...batch.slice(i + 1));
          return broken;
        }
      }
      return undefined;
    }
    if (stored === undefined) {
      // Committed, but which of them? Each writer learns it by its record id, as after a lost connection.
      const error = new Error("append_records answered something that is not a list of positions");
      for (const queued of batch) queued.settle({ kind: "failed", error });
      return undefined;
    }
    for (const [i, queued] of batch.entries()) queued.settle(stored.has(i + 1) ? STORED : NOT_HELD);
    return undefined;
  }
}

const batchers = new PerPoolAndSchema<AppendBatcher>();

/** The batcher of `pool` and `schema`, shared by every store on them in this process. */
export function appendBatcherFor(pool: Pool, schema: string, sql: AppendStatements): AppendBatcher {
  return batchers.get(pool, schema, () => new AppendBatcher(pool, sql));
}
