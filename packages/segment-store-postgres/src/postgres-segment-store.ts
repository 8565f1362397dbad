import { randomUUID } from "node:crypto";
import {
  formatSegmentId,
  isSegmentRecord,
  type OpenSegmentOptions,
  type OpenSegmentResult,
  type PodWriterLock,
  parseSegmentId,
  type ReadSegmentResult,
  type SegmentRecord,
  type SegmentStartRecord,
  type SegmentStore,
  SegmentStoreError,
  type SegmentWarning,
  SharedPodLock,
  type SegmentWriter,
  serializeSegmentRecord,
} from "@insomnia/segment-store";
import pg, { type Pool, type PoolClient } from "pg";
import { migrate, quoteSchema } from "./migrations.ts";
import { lockHolder } from "./lock-holder.ts";
import { PerPoolAndSchema } from "./per-pool-and-schema.ts";
import { causeText, isConnectionError, sleep, sqlState, unavailable } from "./pg-errors.ts";
import { leaseLostError, podLockKey, PodWriterLease } from "./pod-writer-lease.ts";
import { PostgresSegmentWriter } from "./postgres-segment-writer.ts";

import { type StoreContext, storeContext } from "./store-context.ts";

/** Default writer lease: a crashed writer's segment can be taken over this long after its last append or heartbeat. */
export const DEFAULT_LEASE_MS = 30_000;
/** Default time an append whose commit was lost in transit keeps trying to learn whether it is stored. */
export const DEFAULT_RESOLVE_TIMEOUT_MS = 15_000;

interface CommonOptions {
  /** The pod whose segments this store holds (1-200 characters). */
  readonly podId: string;
  /** PostgreSQL schema of the tables (default `insomnia`); created and migrated on open. */
  readonly schema?: string;
  /** Writer lease in milliseconds (default {@link DEFAULT_LEASE_MS}); renewed by every append and every `leaseMs / 3` while idle. */
  readonly leaseMs?: number;
  /** How long an append that lost its connection keeps trying to learn its outcome (default {@link DEFAULT_RESOLVE_TIMEOUT_MS}). */
  readonly resolveTimeoutMs?: number;
  /**
   * `false`: a reader's open (`pod log`) that must not change the database: when the schema
   * has no tables yet, open fails with `SEGMENT_NOT_FOUND` and creates nothing. Default `true`.
   */
  readonly createSchema?: boolean;
}

/** Options of {@link PostgresSegmentStore.open}: a connection string (the store owns its pool) or your own `pg` pool. */
export type PostgresSegmentStoreOptions =
  | (CommonOptions & { readonly connectionString: string; readonly pool?: undefined })
  | (CommonOptions & { readonly pool: Pool; readonly connectionString?: undefined });

const guarded = new WeakSet<Pool>();

interface TakeOverRow {
  old_token: string | null;
  old_host: string | null;
  old_pid: number | null;
  old_expires: string | null;
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * An idle connection that dies (server restart, pooler timeout) is an `error` event on the
 * pool, and one that dies while checked out but between queries is an `error` event on the
 * client; without listeners Node would crash the process. The query in flight (if any) fails
 * on its own and the pool drops the broken connection, so the listeners have nothing to do.
 */
function guardPool(pool: Pool): void {
  if (guarded.has(pool)) return;
  guarded.add(pool);
  if (pool.listenerCount("error") === 0) pool.on("error", ignore);
  pool.on("connect", (client) => client.on("error", ignore));
}

function ignore(): void {}

// Migrations run once per pool and schema in a process; later opens reuse the outcome.
const migrated = new PerPoolAndSchema<Promise<void>>();

function migrateOnce(pool: Pool, schema: string): Promise<void> {
  return migrated.get(pool, schema, () => {
    const done = migrate(pool, schema);
    done.catch(() => migrated.delete(pool, schema));
    return done;
  });
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new SegmentStoreError(
      "INVALID_ARGUMENT",
      `${name} must be a positive whole number of milliseconds, got ${value}`,
    );
  }
  return value;
}

/**
 * A {@link SegmentStore} for one pod on PostgreSQL, shared by every machine that reaches the
 * database: records ordered by a per-segment sequence number the database keeps dense, one
 * transaction per append, one writer per pod under a lease (see `pod-writer-lease.ts`) and
 * one per segment under a fenced lease.
 */
export class PostgresSegmentStore implements SegmentStore {
  readonly podId: string;
  readonly schema: string;
  readonly #ctx: StoreContext;
  readonly #ownsPool: boolean;
  readonly #writers = new Set<PostgresSegmentWriter>();
  #closed = false;
  /** The pod's writer lease as this instance holds it: shared by its writers and `lockPod()` callers. */
  readonly #podLock = new SharedPodLock(async () => {
    const { lease, warnings } = await PodWriterLease.take(this.#ctx);
    return { lock: lease, warnings };
  });

  private constructor(ctx: StoreContext, ownsPool: boolean) {
    this.#ctx = ctx;
    this.podId = ctx.podId;
    this.schema = ctx.schema;
    this.#ownsPool = ownsPool;
  }

  /** The `pg` pool this store queries through. */
  get pool(): Pool {
    return this.#ctx.pool;
  }

  /** Connects, applies the migrations (once per pool and schema in a process) and returns the store of `podId`. */
  static async open(options: PostgresSegmentStoreOptions): Promise<PostgresSegmentStore> {
    const { podId, schema = "insomnia" } = options;
    if (
      typeof podId !== "string" ||
      podId.length === 0 ||
      podId.length > 200 ||
      podId.includes("\u0000") ||
      LONE_SURROGATE.test(podId)
    ) {
      // A lone surrogate would reach the database as U+FFFD: two such ids would share one log.
      throw new SegmentStoreError(
        "INVALID_ARGUMENT",
        `podId must be a string of 1-200 characters without NUL or lone surrogates, got ${JSON.stringify(podId)}`,
      );
    }
    const quoted = quoteSchema(schema);
    const leaseMs = positive("leaseMs", options.leaseMs, DEFAULT_LEASE_MS);
    const resolveTimeoutMs = positive("resolveTimeoutMs", options.resolveTimeoutMs, DEFAULT_RESOLVE_TIMEOUT_MS);
    let pool: Pool;
    const ownsPool = options.pool === undefined;
    if (options.pool !== undefined) {
      pool = options.pool;
    } else if (typeof options.connectionString === "string" && options.connectionString !== "") {
      pool = new pg.Pool({ connectionString: options.connectionString });
    } else {
      throw new SegmentStoreError("INVALID_ARGUMENT", "PostgresSegmentStore.open needs a connectionString or a pool");
    }
    // An idle connection that dies (server restart, pooler timeout) is an `error` event on the
    // pool; without a listener Node would crash the process. The pool drops that connection.
    guardPool(pool);
    try {
      if (options.createSchema === false && !(await hasTables(pool, schema))) {
        throw new SegmentStoreError(
          "SEGMENT_NOT_FOUND",
          `schema ${schema} of this database holds no segments yet (the first writer creates its tables); nothing was created`,
        );
      }
      await migrateOnce(pool, schema);
    } catch (error) {
      if (ownsPool) await pool.end().catch(() => undefined);
      if (SegmentStoreError.is(error)) throw error;
      const refused = refusedConnection(error);
      if (refused !== undefined) throw refused;
      if (isConnectionError(error)) throw unavailable(`opening the segment store of pod ${podId}`, error);
      throw new SegmentStoreError(
        "SEGMENT_IO",
        `migrating schema ${schema} failed: ${causeText(error)}; check that the user may create schemas and tables there`,
        { cause: error },
      );
    }
    return new PostgresSegmentStore(storeContext(pool, podId, schema, quoted, leaseMs, resolveTimeoutMs), ownsPool);
  }

  async lockPod(): Promise<PodWriterLock> {
    this.#checkOpen();
    return this.#podLock.share();
  }

  /** Takes a share of the pod's writer lease (the first share takes the lease); its warnings go to the first taker. */
  async #enter(): Promise<{ lease: PodWriterLease; warnings: SegmentWarning[] }> {
    const { lock, warnings } = await this.#podLock.enter();
    return { lease: lock, warnings };
  }

  #leave(): Promise<void> {
    return this.#podLock.leave();
  }

  async createSegment(start: SegmentStartRecord): Promise<SegmentWriter> {
    this.#checkOpen();
    const json = serializeSegmentRecord(start, "(new)", "segment_start");
    const { lease } = await this.#enter();
    try {
      return await this.#create(json, lease);
    } catch (error) {
      await this.#leave();
      throw error;
    }
  }

  async #create(json: string, lease: PodWriterLease): Promise<SegmentWriter> {
    const { pool, sql, podId, host, leaseMs } = this.#ctx;
    const token = randomUUID();
    const recordId = randomUUID();
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw unavailable(`creating a segment of pod ${podId}`, error, false);
    }
    let failure: unknown;
    let segmentNo: string | undefined;
    try {
      await client.query("BEGIN");
      await client.query(sql.lockPod, [this.#lockKey()]);
      if ((await client.query(sql.podHeld, [podId, lease.token])).rowCount !== 1) {
        throw leaseLostError(this.#ctx, `creating a segment of pod ${podId}`);
      }
      const { rows } = await client.query<{ segment_no: string }>(sql.create, [
        podId,
        token,
        host,
        process.pid,
        leaseMs,
        recordId,
        json,
      ]);
      segmentNo = rows[0]?.segment_no;
      await client.query("COMMIT");
    } catch (error) {
      failure = error;
      if (!isConnectionError(error)) await client.query("ROLLBACK").catch(() => undefined);
    } finally {
      client.release(failure === undefined || SegmentStoreError.is(failure) ? undefined : (failure as Error));
    }
    if (failure !== undefined) {
      if (SegmentStoreError.is(failure)) throw failure;
      if (!isConnectionError(failure)) {
        throw new SegmentStoreError(
          "SEGMENT_IO",
          `creating a segment of pod ${podId}: PostgreSQL refused it (${causeText(failure)}); nothing was written`,
          { cause: failure, durable: false },
        );
      }
      segmentNo = await this.#resolveCreate(recordId, failure);
    }
    if (segmentNo === undefined) throw new SegmentStoreError("SEGMENT_IO", "creating a segment returned no row");
    return this.#writer(segmentNo, token, 1);
  }

  /** After a create lost its connection: waits for its transaction (the pod's lock) and looks its start record up. */
  async #resolveCreate(recordId: string, cause: unknown): Promise<string> {
    const { pool, sql, podId, resolveTimeoutMs } = this.#ctx;
    const deadline = Date.now() + resolveTimeoutMs;
    const what = `creating a segment of pod ${podId}`;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      let client: PoolClient | undefined;
      let failure: unknown;
      try {
        client = await pool.connect();
        await client.query("BEGIN");
        await client.query(sql.lockPod, [this.#lockKey()]);
        const { rows } = await client.query<{ segment_no: string }>(sql.findCreated, [podId, recordId]);
        await client.query("COMMIT");
        const found = rows[0]?.segment_no;
        if (found !== undefined) return found;
        throw unavailable(what, cause, false);
      } catch (error) {
        failure = error;
        if (SegmentStoreError.is(error)) throw error;
        if (!isConnectionError(error)) throw unavailable(what, error, "unknown");
      } finally {
        client?.release(failure !== undefined && !SegmentStoreError.is(failure) ? (failure as Error) : undefined);
      }
      if (Date.now() + delay > deadline) throw unavailable(what, cause, "unknown");
      await sleep(delay);
    }
  }

  #lockKey(): string {
    return podLockKey(this.#ctx);
  }

  #writer(segmentNo: string, token: string, nextSeq: number): PostgresSegmentWriter {
    const writer = new PostgresSegmentWriter(
      this.#ctx,
      { segmentId: formatSegmentId(Number(segmentNo)), segmentNo, token, nextSeq },
      (closed) => {
        this.#writers.delete(closed);
        return this.#leave();
      },
    );
    this.#writers.add(writer);
    return writer;
  }

  async openSegment(segmentId: string, _options?: OpenSegmentOptions): Promise<OpenSegmentResult> {
    this.#checkOpen();
    const segmentNo = this.#segmentNo(segmentId);
    const { lease, warnings } = await this.#enter();
    try {
      return await this.#open(segmentId, segmentNo, lease, warnings);
    } catch (error) {
      await this.#leave();
      throw error;
    }
  }

  /** Takes over the segment's lease (free or run out) under the pod's lock, while this instance still holds the pod. */
  async #takeOver(segmentNo: string, token: string, lease: PodWriterLease, what: string): Promise<TakeOverRow[]> {
    const { pool, sql, podId, host, leaseMs } = this.#ctx;
    const client = await pool.connect();
    let failure: unknown;
    try {
      await client.query("BEGIN");
      await client.query(sql.lockPod, [this.#lockKey()]);
      if ((await client.query(sql.podHeld, [podId, lease.token])).rowCount !== 1) {
        throw leaseLostError(this.#ctx, what);
      }
      const { rows } = await client.query<TakeOverRow>(sql.takeOver, [
        podId,
        segmentNo,
        token,
        host,
        process.pid,
        leaseMs,
      ]);
      await client.query("COMMIT");
      return rows;
    } catch (error) {
      failure = error;
      if (!isConnectionError(error)) await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release(failure === undefined || SegmentStoreError.is(failure) ? undefined : (failure as Error));
    }
  }

  async #open(
    segmentId: string,
    segmentNo: string,
    lease: PodWriterLease,
    warnings: SegmentWarning[],
  ): Promise<OpenSegmentResult> {
    const { pool, sql, podId } = this.#ctx;
    const token = randomUUID();
    const what = `opening segment ${segmentId} of pod ${podId}`;
    for (let attempt = 0; ; attempt += 1) {
      let rows: TakeOverRow[];
      try {
        rows = await this.#takeOver(segmentNo, token, lease, what);
      } catch (error) {
        throw this.#failed(what, error);
      }
      const taken = rows[0];
      if (taken !== undefined) {
        if (taken.old_token !== null) {
          warnings.push({
            code: "SEGMENT_LOCK_STALE",
            message:
              `segment ${segmentId} of pod ${podId}: took over the lease of process ${taken.old_pid ?? "?"} on ${taken.old_host ?? "?"}, ` +
              `which ran out at ${taken.old_expires ?? "?"} without being renewed (that writer crashed or lost the database; it is fenced now)`,
          });
        }
        break;
      }
      const locked = await this.#lockedError(segmentId, segmentNo);
      if (locked !== undefined) throw locked;
      if (attempt >= 3)
        throw new SegmentStoreError("SEGMENT_LOCKED", `${what}: the segment's lease keeps changing hands; try again`);
    }
    let records: SegmentRecord[];
    try {
      records = await this.#read(segmentId, segmentNo);
    } catch (error) {
      await pool.query(sql.release, [podId, segmentNo, token]).catch(() => undefined);
      throw error;
    }
    return { records, warnings, writer: this.#writer(segmentNo, token, records.length) };
  }

  /** The error for a segment whose lease could not be taken: not found, or locked (with who and until when); `undefined` if it is free now. */
  async #lockedError(segmentId: string, segmentNo: string): Promise<SegmentStoreError | undefined> {
    const { pool, sql, podId, leaseMs } = this.#ctx;
    let row:
      | {
          held: boolean;
          writer_host: string | null;
          writer_pid: number | null;
          expires: string | null;
          remaining_ms: string | null;
        }
      | undefined;
    try {
      ({
        rows: [row],
      } = await pool.query<NonNullable<typeof row>>(sql.holder, [podId, segmentNo]));
    } catch (error) {
      return this.#failed(`opening segment ${segmentId} of pod ${podId}`, error);
    }
    if (row === undefined) return this.#notFound(segmentId);
    if (!row.held) return undefined;
    return new SegmentStoreError(
      "SEGMENT_LOCKED",
      `segment ${segmentId} of pod ${podId} is being written by process ${row.writer_pid ?? "?"} on ${row.writer_host ?? "?"}; ` +
        `only one writer may append to a segment. Close that pod first; if it crashed, its lease runs out at ${row.expires ?? "?"} ` +
        `(in ${row.remaining_ms ?? "?"} ms; leases last ${leaseMs} ms) and the segment can be opened then`,
      { lock: lockHolder(row) },
    );
  }

  async readSegment(segmentId: string): Promise<ReadSegmentResult> {
    this.#checkOpen();
    return { records: await this.#read(segmentId, this.#segmentNo(segmentId)), warnings: [] };
  }

  async #read(segmentId: string, segmentNo: string): Promise<SegmentRecord[]> {
    const { pool, sql, podId } = this.#ctx;
    let rows: { body: unknown }[];
    try {
      ({ rows } = await pool.query<{ body: unknown }>(sql.read, [podId, segmentNo]));
    } catch (error) {
      throw this.#failed(`reading segment ${segmentId} of pod ${podId}`, error);
    }
    if (rows.length === 0) throw this.#notFound(segmentId);
    const records: SegmentRecord[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i += 1) {
      const body = (rows[i] as { body: unknown }).body;
      if (!isSegmentRecord(body) || (body.type === "segment_start") !== (i === 0)) {
        throw new SegmentStoreError(
          "SEGMENT_CORRUPT",
          `segment ${segmentId} of pod ${podId}: record ${i} is not a ${i === 0 ? "segment_start" : "message"} record ` +
            `(schema ${this.schema}, table records); it was not written by this store — the segment was left as it is`,
          { line: i + 1 },
        );
      }
      records[i] = body;
    }
    return records;
  }

  async listSegments(): Promise<string[]> {
    this.#checkOpen();
    const { pool, sql, podId } = this.#ctx;
    try {
      const { rows } = await pool.query<{ segment_no: string }>(sql.list, [podId]);
      return rows.map((row) => formatSegmentId(Number(row.segment_no)));
    } catch (error) {
      throw this.#failed(`listing the segments of pod ${podId}`, error);
    }
  }

  async latestSegment(): Promise<string | undefined> {
    return (await this.listSegments()).at(-1);
  }

  /** Closes the open writers (giving their leases back) and, when the store made its own pool, ends it. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#writers].map((writer) => writer.close()));
    // Shares of `lockPod()` callers that never released: the lease goes back with the store.
    await this.#podLock.releaseAll();
    if (this.#ownsPool) await this.#ctx.pool.end();
  }

  #checkOpen(): void {
    if (this.#closed) {
      throw new SegmentStoreError("SEGMENT_IO", `the segment store of pod ${this.podId} is closed; open a new one`);
    }
  }

  #segmentNo(segmentId: string): string {
    const n = parseSegmentId(segmentId);
    if (n === undefined) {
      throw new SegmentStoreError(
        "SEGMENT_NOT_FOUND",
        `"${segmentId}" is not a segment id (expected "seg-" and at least 10 digits, as listed by listSegments())`,
      );
    }
    return String(n);
  }

  #notFound(segmentId: string): SegmentStoreError {
    return new SegmentStoreError(
      "SEGMENT_NOT_FOUND",
      `segment ${segmentId} of pod ${this.podId} does not exist (schema ${this.schema}); listSegments() shows the segments there`,
    );
  }

  #failed(what: string, error: unknown): SegmentStoreError {
    if (SegmentStoreError.is(error)) return error;
    if (isConnectionError(error)) return unavailable(what, error);
    return new SegmentStoreError("SEGMENT_IO", `${what}: PostgreSQL refused it (${causeText(error)})`, {
      cause: error,
    });
  }
}

/** Whether `schema` has the store's tables (its migrations table), without creating anything. */
async function hasTables(pool: Pool, schema: string): Promise<boolean> {
  const { rows } = await pool.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [
    `${quoteSchema(schema)}.schema_migrations`,
  ]);
  return rows[0]?.found !== null && rows[0]?.found !== undefined;
}

/** The server refused the connection itself (no such database, wrong password): say which, not "permissions". */
function refusedConnection(error: unknown): SegmentStoreError | undefined {
  const state = sqlState(error);
  if (state === "3D000") {
    return new SegmentStoreError(
      "SEGMENT_UNAVAILABLE",
      `${causeText(error)}: create it (e.g. createdb <name>) or fix the database name in the URL`,
      { cause: error, durable: false },
    );
  }
  if (state === "28P01" || state === "28000") {
    return new SegmentStoreError(
      "SEGMENT_UNAVAILABLE",
      `${causeText(error)}: check the user and password in the URL (or PGPASSWORD, ~/.pgpass)`,
      { cause: error, durable: false },
    );
  }
  return undefined;
}

/** Opens the store of `podId` at `url` (`postgres://…`), with the store's own pool; for `pod run --store postgres://…`. */
export function openPostgresStore(
  url: string,
  podId: string,
  options: Omit<CommonOptions, "podId"> = {},
): Promise<PostgresSegmentStore> {
  return PostgresSegmentStore.open({ ...options, connectionString: url, podId });
}
