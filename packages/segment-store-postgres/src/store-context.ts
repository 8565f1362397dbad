import { hostname } from "node:os";
import type { Pool } from "pg";
import { type AppendBatcher, appendBatcherFor } from "./append-batcher.ts";

/** What a store and its writers share: the pool, the pod, the settings and the SQL text. */
export interface StoreContext {
  readonly pool: Pool;
  readonly podId: string;
  readonly schema: string;
  readonly leaseMs: number;
  readonly resolveTimeoutMs: number;
  readonly host: string;
  readonly sql: ReturnType<typeof statements>;
  /** Sends the appends of every writer on this pool and schema, together when they arrive at once. */
  readonly appends: AppendBatcher;
}

/** Builds the context; every statement is plain text with `$n` parameters (no named prepared statements). */
export function storeContext(
  pool: Pool,
  podId: string,
  schema: string,
  quoted: string,
  leaseMs: number,
  resolveTimeoutMs: number,
): StoreContext {
  const sql = statements(quoted);
  return {
    pool,
    podId,
    schema,
    leaseMs,
    resolveTimeoutMs,
    host: hostname(),
    sql,
    appends: appendBatcherFor(pool, schema, sql),
  };
}

function statements(s: string) {
  const lease = "now() + $LEASE * interval '1 millisecond'";
  return {
    lockPod: "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
    // $1 pod, $2 token, $3 host, $4 pid, $5 lease ms, $6 record id, $7 body
    create: `WITH pod AS (
        INSERT INTO ${s}.pods AS p (pod_id, last_segment_no) VALUES ($1, 1)
        ON CONFLICT (pod_id) DO UPDATE SET last_segment_no = p.last_segment_no + 1
        RETURNING pod_id, last_segment_no
      ), seg AS (
        INSERT INTO ${s}.segments (pod_id, segment_no, writer_token, writer_host, writer_pid, lease_expires_at, start_record_id)
        SELECT pod_id, last_segment_no, $2, $3, $4, ${lease.replace("$LEASE", "$5")}, $6 FROM pod
        RETURNING pod_id, segment_no
      )
      INSERT INTO ${s}.records (pod_id, segment_no, seq, record_id, body)
      SELECT pod_id, segment_no, 0, $6, $7 FROM seg
      RETURNING segment_no::text AS segment_no`,
    // $1 pod, $2 start record id
    findCreated: `SELECT segment_no::text AS segment_no FROM ${s}.segments WHERE pod_id = $1 AND start_record_id = $2`,
    // $1 pod, $2 segment, $3 seq, $4 record id
    findRecord: `SELECT record_id = $4 AS ours FROM ${s}.records WHERE pod_id = $1 AND segment_no = $2 AND seq = $3`,
    // $1 pod, $2 segment, $3 seq, $4 token, $5 record id, $6 body. The fence (migration 2): the
    // record goes in only while the writer's token holds the segment, else SQLSTATE IN001 and
    // nothing written; FOR KEY SHARE keeps the row so until commit (a takeover's FOR UPDATE waits
    // for it); the lease is renewed by the heartbeat, not here. A procedure, so its insert is
    // planned once per connection by the server, not on every append, and no row comes back.
    append: `CALL ${s}.append_record($1, $2, $3, $4, $5, $6)`,
    // $1 pods, $2 segments, $3 seqs, $4 tokens, $5 record ids (arrays), $6 the bodies as one JSON
    // array. Several writers' appends in one statement (migration 3), each fenced as alone;
    // answers the 1-based positions of those it stored (the others' tokens no longer held
    // their segments: nothing written for them), or NULL for none.
    appendMany: `SELECT ${s}.append_records($1::text[], $2::bigint[], $3::bigint[], $4::uuid[], $5::uuid[], $6::json) AS stored`,
    // $1 pod, $2 segment, $3 token, $4 lease ms
    renew: `UPDATE ${s}.segments SET lease_expires_at = ${lease.replace("$LEASE", "$4")}
      WHERE pod_id = $1 AND segment_no = $2 AND writer_token = $3`,
    // $1 pod, $2 segment, $3 old token, $4 new token, $5 lease ms
    // FOR UPDATE first: it waits for an append still in flight on the old token (FOR KEY SHARE).
    rotate: `WITH held AS (
        SELECT pod_id, segment_no FROM ${s}.segments
        WHERE pod_id = $1 AND segment_no = $2 AND writer_token = $3 FOR UPDATE
      )
      UPDATE ${s}.segments AS seg SET writer_token = $4, lease_expires_at = ${lease.replace("$LEASE", "$5")}
      FROM held WHERE seg.pod_id = held.pod_id AND seg.segment_no = held.segment_no`,
    // $1 pod, $2 segment, $3 token
    release: `UPDATE ${s}.segments SET writer_token = NULL, writer_host = NULL, writer_pid = NULL, lease_expires_at = NULL
      WHERE pod_id = $1 AND segment_no = $2 AND writer_token = $3`,
    // $1 pod, $2 segment, $3 token, $4 host, $5 pid, $6 lease ms
    takeOver: `UPDATE ${s}.segments AS seg
      SET writer_token = $3, writer_epoch = seg.writer_epoch + 1, writer_host = $4, writer_pid = $5,
          lease_expires_at = ${lease.replace("$LEASE", "$6")}
      FROM (
        SELECT pod_id, segment_no, writer_token, writer_host, writer_pid, lease_expires_at
        FROM ${s}.segments WHERE pod_id = $1 AND segment_no = $2 FOR UPDATE
      ) AS old
      WHERE seg.pod_id = old.pod_id AND seg.segment_no = old.segment_no
        AND (old.writer_token IS NULL OR old.lease_expires_at < now())
      RETURNING old.writer_token AS old_token, old.writer_host AS old_host, old.writer_pid AS old_pid,
        to_char(old.lease_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS old_expires`,
    // $1 pod, $2 segment
    holder: `SELECT writer_token IS NOT NULL AS held, writer_host, writer_pid,
        to_char(lease_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires,
        GREATEST(0, ceil(extract(epoch FROM lease_expires_at - now()) * 1000))::bigint::text AS remaining_ms
      FROM ${s}.segments WHERE pod_id = $1 AND segment_no = $2`,
    // $1 pod. Under the pod's advisory lock: who holds the pod's writer lease, and whether it ran out.
    podHolder: `SELECT writer_token::text AS token, writer_host, writer_pid, lease_expires_at < now() AS expired,
        to_char(lease_expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires,
        GREATEST(0, ceil(extract(epoch FROM lease_expires_at - now()) * 1000))::bigint::text AS remaining_ms
      FROM ${s}.pod_writers WHERE pod_id = $1`,
    // $1 pod, $2 token, $3 host, $4 pid, $5 lease ms
    podTake: `INSERT INTO ${s}.pod_writers AS w (pod_id, writer_token, writer_epoch, writer_host, writer_pid, lease_expires_at)
      VALUES ($1, $2, 1, $3, $4, ${lease.replace("$LEASE", "$5")})
      ON CONFLICT (pod_id) DO UPDATE SET writer_token = $2, writer_epoch = w.writer_epoch + 1, writer_host = $3,
        writer_pid = $4, lease_expires_at = ${lease.replace("$LEASE", "$5")}`,
    // $1 pod. A new pod holder fences every segment writer left from before (waits for their appends in flight).
    podFenceSegments: `UPDATE ${s}.segments SET writer_token = NULL, writer_host = NULL, writer_pid = NULL, lease_expires_at = NULL
      WHERE pod_id = $1 AND writer_token IS NOT NULL`,
    // $1 pod, $2 token
    podHeld: `SELECT 1 FROM ${s}.pod_writers WHERE pod_id = $1 AND writer_token = $2`,
    // $1 pod, $2 token, $3 lease ms
    podRenew: `UPDATE ${s}.pod_writers SET lease_expires_at = ${lease.replace("$LEASE", "$3")}
      WHERE pod_id = $1 AND writer_token = $2`,
    // $1 pod, $2 token
    podRelease: `UPDATE ${s}.pod_writers SET writer_token = NULL, writer_host = NULL, writer_pid = NULL, lease_expires_at = NULL
      WHERE pod_id = $1 AND writer_token = $2`,
    read: `SELECT body FROM ${s}.records WHERE pod_id = $1 AND segment_no = $2 ORDER BY seq`,
    list: `SELECT segment_no::text AS segment_no FROM ${s}.segments AS seg WHERE pod_id = $1 ORDER BY seg.segment_no`,
  };
}
