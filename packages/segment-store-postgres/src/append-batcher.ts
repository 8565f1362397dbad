import type { Pool, PoolClient } from "pg";
import { NOT_HELD_STATE } from "./migrations.ts";
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
}

/** The SQL the batcher sends: one append (`$1…$6`) and many (six arrays, the bodies as one JSON array). */
export interface AppendStatements {
  readonly append: string;
  readonly appendMany: string;
}

/** Most appends sent in one statement, and most characters of their JSON (a larger record still goes, alone). */
export const MAX_BATCH_RECORDS = 32;
export const MAX_BATCH_JSON_CHARS = 1 << 20;

const STORED: AppendOutcome = { kind: "stored" };
const NOT_HELD: AppendOutcome = { kind: "not-held" };

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

  constructor(pool: Pool, sql: AppendStatements) {
    this.#pool = pool;
    this.#sql = sql;
  }

  /** Sends `request` (alone or with others waiting at the same time); never rejects. */
  append(request: AppendRequest): Promise<AppendOutcome> {
    return new Promise((settle) => {
      this.#queue.push({ request, settle });
      this.#pump();
    });
  }

  #pump(): void {
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
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#connecting -= 1;
      // Nothing can be sent: those waiting learn it now instead of queueing for a dead pool.
      for (const queued of this.#take()) queued.settle({ kind: "not-sent", error });
      return;
    }
    this.#connecting -= 1;
    const batch = this.#take();
    let broken: Error | undefined;
    try {
      broken =
        batch.length === 1 ? await this.#sendOne(client, batch[0] as Queued) : await this.#sendMany(client, batch);
    } finally {
      // A refusal leaves the connection healthy; only a broken one is dropped from the pool.
      client.release(broken);
    }
  }

  /** The appends waiting now, oldest first, up to the batch limits. */
  #take(): Queued[] {
    let chars = 0;
    let n = 0;
    while (n < this.#queue.length && n < MAX_BATCH_RECORDS) {
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
    let notHeld: number[] | null;
    try {
      const { rows } = await client.query<{ not_held: number[] | null }>(this.#sql.appendMany, [
        requests.map((r) => r.podId),
        requests.map((r) => r.segmentNo),
        requests.map((r) => r.seq),
        requests.map((r) => r.token),
        requests.map((r) => r.recordId),
        // The bodies as one JSON array of the records' own text: nothing to escape, and the
        // server keeps each element's text as it is.
        `[${requests.map((r) => r.json).join(",")}]`,
      ]);
      notHeld = rows[0]?.not_held ?? null;
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
          for (const rest of batch.slice(i + 1)) rest.settle({ kind: "not-sent", error: broken });
          return broken;
        }
      }
      return undefined;
    }
    const refused = new Set(notHeld ?? []);
    for (const [i, queued] of batch.entries()) queued.settle(refused.has(i + 1) ? NOT_HELD : STORED);
    return undefined;
  }
}

const batchers = new WeakMap<Pool, Map<string, AppendBatcher>>();

/** The batcher of `pool` and `schema`, shared by every store on them in this process. */
export function appendBatcherFor(pool: Pool, schema: string, sql: AppendStatements): AppendBatcher {
  let bySchema = batchers.get(pool);
  if (bySchema === undefined) {
    bySchema = new Map();
    batchers.set(pool, bySchema);
  }
  let batcher = bySchema.get(schema);
  if (batcher === undefined) {
    batcher = new AppendBatcher(pool, sql);
    bySchema.set(schema, batcher);
  }
  return batcher;
}
