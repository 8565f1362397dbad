import { randomUUID } from "node:crypto";
import { SegmentStoreError, type SegmentWarning } from "@insomnia/segment-store";
import type { PoolClient } from "pg";
import { causeText, isConnectionError, sleep, unavailable } from "./pg-errors.ts";
import type { StoreContext } from "./store-context.ts";

/** The advisory lock key under which everything that changes who writes a pod runs. */
export function podLockKey(ctx: StoreContext): string {
  return `insomnia.segment-store-postgres:${ctx.schema}:${ctx.podId}`;
}

interface PodHolderRow {
  token: string | null;
  writer_host: string | null;
  writer_pid: number | null;
  expired: boolean | null;
  expires: string | null;
  remaining_ms: string | null;
}

/**
 * The pod's writer lease (table `pod_writers`, migration 4) as one store instance holds it:
 * taken when free or run out, renewed every `leaseMs / 3` by an unref'd heartbeat, given back
 * by `release()`. Taking it clears the writer token of every segment of the pod in the same
 * transaction, so a holder that lost it (paused, partitioned) is fenced at its next append.
 */
export class PodWriterLease {
  readonly token: string;
  readonly #ctx: StoreContext;
  #heartbeat: ReturnType<typeof setInterval> | undefined;

  private constructor(ctx: StoreContext, token: string) {
    this.#ctx = ctx;
    this.token = token;
    this.#heartbeat = setInterval(() => {
      void this.#renew().catch(() => undefined);
    }, ctx.leaseMs / 3);
    this.#heartbeat.unref();
  }

  /** Takes the lease of `ctx.podId`; `SEGMENT_LOCKED` (who, and until when) while another holds it. */
  static async take(ctx: StoreContext): Promise<{ lease: PodWriterLease; warnings: SegmentWarning[] }> {
    const { pool, sql, podId, host, leaseMs } = ctx;
    const token = randomUUID();
    const what = `taking the writer lease of pod ${podId}`;
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw unavailable(what, error);
    }
    let failure: unknown;
    let previous: PodHolderRow | undefined;
    try {
      await client.query("BEGIN");
      await client.query(sql.lockPod, [podLockKey(ctx)]);
      ({
        rows: [previous],
      } = await client.query<PodHolderRow>(sql.podHolder, [podId]));
      if (previous?.token != null && previous.expired !== true) {
        await client.query("ROLLBACK");
        throw lockedError(ctx, previous);
      }
      await client.query(sql.podTake, [podId, token, host, process.pid, leaseMs]);
      await client.query(sql.podFenceSegments, [podId]);
      await client.query("COMMIT");
    } catch (error) {
      failure = error;
      if (!SegmentStoreError.is(error) && !isConnectionError(error)) {
        await client.query("ROLLBACK").catch(() => undefined);
      }
    } finally {
      client.release(failure === undefined || SegmentStoreError.is(failure) ? undefined : (failure as Error));
    }
    if (failure !== undefined) {
      if (SegmentStoreError.is(failure)) throw failure;
      if (!isConnectionError(failure)) {
        throw new SegmentStoreError("SEGMENT_IO", `${what}: PostgreSQL refused it (${causeText(failure)})`, {
          cause: failure,
        });
      }
      // The connection dropped, perhaps after the commit: learn whether the lease is ours.
      if (!(await PodWriterLease.#resolveTake(ctx, token, failure))) throw unavailable(what, failure);
    }
    const warnings: SegmentWarning[] =
      previous?.token != null
        ? [
            {
              code: "SEGMENT_LOCK_STALE",
              message:
                `pod ${podId}: took over the writer lease of process ${previous.writer_pid ?? "?"} on ${previous.writer_host ?? "?"}, ` +
                `which ran out at ${previous.expires ?? "?"} without being renewed (that writer crashed or lost the database; it is fenced now)`,
            },
          ]
        : [];
    return { lease: new PodWriterLease(ctx, token), warnings };
  }

  /** Renews the lease; once it was taken over there is nothing left to renew (creates and opens check it themselves). */
  /** After a take lost its connection: waits for its transaction (the pod's advisory lock) and looks the token up. */
  static async #resolveTake(ctx: StoreContext, token: string, cause: unknown): Promise<boolean> {
    const { pool, sql, podId, resolveTimeoutMs } = ctx;
    const deadline = Date.now() + resolveTimeoutMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      let client: PoolClient | undefined;
      let failure: unknown;
      try {
        client = await pool.connect();
        await client.query("BEGIN");
        await client.query(sql.lockPod, [podLockKey(ctx)]);
        const { rowCount } = await client.query(sql.podHeld, [podId, token]);
        await client.query("COMMIT");
        return rowCount === 1;
      } catch (error) {
        failure = error;
        if (!isConnectionError(error)) throw unavailable(`taking the writer lease of pod ${podId}`, cause);
      } finally {
        client?.release(failure === undefined ? undefined : (failure as Error));
      }
      if (Date.now() + delay > deadline) return false;
      await sleep(delay);
    }
  }

  async #renew(): Promise<void> {
    if (this.#heartbeat === undefined) return;
    const { pool, sql, podId, leaseMs } = this.#ctx;
    const { rowCount } = await pool.query(sql.podRenew, [podId, this.token, leaseMs]);
    if (rowCount !== 1) {
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
    }
  }

  /** Stops the heartbeat and gives the lease back (if the database is out of reach, it runs out by itself). */
  async release(): Promise<void> {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    const { pool, sql, podId } = this.#ctx;
    await pool.query(sql.podRelease, [podId, this.token]).catch(() => undefined);
  }
}

function lockedError(ctx: StoreContext, row: PodHolderRow): SegmentStoreError {
  return new SegmentStoreError(
    "SEGMENT_LOCKED",
    `pod ${ctx.podId} is being written by process ${row.writer_pid ?? "?"} on ${row.writer_host ?? "?"}; ` +
      `only one writer may write a pod at a time. Close that pod first; if it crashed, its lease runs out at ${row.expires ?? "?"} ` +
      `(in ${row.remaining_ms ?? "?"} ms; leases last ${ctx.leaseMs} ms) and the pod can be written then`,
  );
}

/** The error for a create or open by a store whose lease was taken over meanwhile. */
export function leaseLostError(ctx: StoreContext, what: string): SegmentStoreError {
  return new SegmentStoreError(
    "SEGMENT_FENCED",
    `${what}: this store lost the writer lease of pod ${ctx.podId} to another process (it was not renewed in time); nothing was written — open the store again`,
  );
}
