import { createHash } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { SegmentStoreError } from "@insomnia/segment-store";

/** One versioned schema change; `sql` names the schema as `{schema}`. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * The schema, one migration per version, never edited once released (a changed hash is
 * refused): add a new version instead.
 *
 * - `pods`: one row per pod, the counter of its segments.
 * - `segments`: one row per segment, with its writer's lease: `writer_token` is the fencing
 *   token (an append must name it, and holds the row against a takeover until it commits),
 *   `lease_expires_at` (database clock) the time after which another writer may take the
 *   segment over, `writer_epoch` counts the takeovers; `start_record_id` is the id of its
 *   first record, to find a segment whose creation lost its connection. Every append
 *   locks its segment's row, so the rows are spread over pages (fillfactor 10) to keep pods
 *   that append at once from queueing on one page; the heartbeat's updates stay HOT there.
 * - `records`: the log. `(pod_id, segment_no, seq)` is the primary key; `prev_seq` points at
 *   the previous record of the same segment, so the database itself refuses a gap, and the key
 *   refuses a duplicate: only the next sequence number can be inserted. (Record 0 is inserted
 *   with its segment by one statement, so every record's segment exists; a foreign key to
 *   `segments` would cost every append a second check for nothing.) `record_id` is made by
 *   the client before it sends an append, so an append whose commit was lost in transit can
 *   be recognized at its sequence number after reconnecting (no index of its own: the key
 *   finds it). `body` is the record's JSON text, kept verbatim (`json`, not `jsonb`, which
 *   would reorder keys).
 * - `append_record` (version 2): the append as a PL/pgSQL procedure, so that an append is one
 *   short statement (`CALL append_record($1, …)`) whose insert is planned once per database
 *   connection instead of parsed, analysed and planned on every append, and which answers with
 *   no result row, so the client's work per append is that of a plain `INSERT`. Its body is
 *   the version-1 append: the record goes in only while the writer's token holds the segment,
 *   and `FOR KEY SHARE` keeps the segment row so until commit (a takeover's `FOR UPDATE`
 *   waits); when the token no longer holds it, it raises SQLSTATE `IN001`
 *   ({@link NOT_HELD_STATE}) and nothing is written. The key and the `prev_seq` foreign key
 *   still refuse anything but the next record, for any insert, through the procedure or not.
 *   The plan cache is the server's own, invisible to the session: nothing is prepared by name
 *   and no session state is set, so it works through a transaction-mode pooler. Its values are
 *   always parameters, never SQL literals: a refused append (a fenced writer, a duplicate) would
 *   then write the whole record into the server's log (`log_min_error_statement`), and every
 *   running one would show it in `pg_stat_activity`; a conversation is not for those.
 * - `pod_writers` (version 4): the pod's writer lease, one row per pod that ever had a writer:
 *   at most one process writes a pod, across all of its segments. A store takes it (under the
 *   pod's advisory transaction lock) when it is free or has run out, and in the same
 *   transaction clears the writer token of every segment of the pod, so a previous holder that
 *   lost the lease is fenced at its next append; creating and re-opening a segment check it
 *   under that lock too. Renewed by the holder's heartbeat, given back when its last writer closes.
 * - `append_records` (version 3): the appends of several writers in one statement (see
 *   AppendBatcher: appends that arrive while all of a pool's connections are busy go together),
 *   so they share one transaction, one commit and one WAL flush. Each record is fenced as in
 *   `append_record` (its own segment row, its own token, `FOR KEY SHARE` until commit); records
 *   whose token no longer holds their segment are left out; it returns the 1-based positions of
 *   those it stored (a function, for that answer; an answer the client cannot read is never
 *   taken to mean "stored": each writer then looks its record up by id). The bodies come as
 *   one JSON array of the records' text: `json_array_elements` of a `json` value gives each
 *   element's text as it is.
 *
 * The gap check is a foreign key: no constraint that only looks for a conflicting row (a key,
 * an exclusion constraint) can see that a row is missing, so a lookup per insert is the floor,
 * and the foreign key's was the cheapest one measured (bench/RESULTS.md, "Figures moved out
 * of code comments").
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "segment log",
    sql: `
CREATE TABLE {schema}.pods (
  pod_id text PRIMARY KEY,
  last_segment_no bigint NOT NULL CHECK (last_segment_no > 0)
);
CREATE TABLE {schema}.segments (
  pod_id text NOT NULL REFERENCES {schema}.pods (pod_id),
  segment_no bigint NOT NULL CHECK (segment_no > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  writer_token uuid,
  writer_epoch bigint NOT NULL DEFAULT 1,
  writer_host text,
  writer_pid integer,
  lease_expires_at timestamptz,
  start_record_id uuid NOT NULL,
  PRIMARY KEY (pod_id, segment_no)
) WITH (fillfactor = 10);
CREATE TABLE {schema}.records (
  pod_id text NOT NULL,
  segment_no bigint NOT NULL,
  seq bigint NOT NULL CHECK (seq >= 0),
  prev_seq bigint GENERATED ALWAYS AS (NULLIF(seq, 0) - 1) STORED,
  record_id uuid NOT NULL,
  body json NOT NULL,
  PRIMARY KEY (pod_id, segment_no, seq),
  FOREIGN KEY (pod_id, segment_no, prev_seq) REFERENCES {schema}.records (pod_id, segment_no, seq)
);
`,
  },
  {
    version: 2,
    name: "append procedure",
    sql: `
CREATE PROCEDURE {schema}.append_record(
  p_pod_id text, p_segment_no bigint, p_seq bigint, p_token uuid, p_record_id uuid, p_body json
) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO {schema}.records (pod_id, segment_no, seq, record_id, body)
    SELECT pod_id, segment_no, p_seq, p_record_id, p_body FROM {schema}.segments
    WHERE pod_id = p_pod_id AND segment_no = p_segment_no AND writer_token = p_token
    FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'segment % of pod % is not held by this writer', p_segment_no, p_pod_id
      USING ERRCODE = 'IN001';
  END IF;
END
$$;
`,
  },
  {
    version: 3,
    name: "group append",
    sql: `
CREATE FUNCTION {schema}.append_records(
  p_pod_ids text[], p_segment_nos bigint[], p_seqs bigint[], p_tokens uuid[], p_record_ids uuid[], p_bodies json
) RETURNS integer[] LANGUAGE plpgsql AS $$
DECLARE
  stored integer[];
BEGIN
  IF cardinality(p_pod_ids) IS DISTINCT FROM json_array_length(p_bodies)
    OR cardinality(p_segment_nos) IS DISTINCT FROM cardinality(p_pod_ids)
    OR cardinality(p_seqs) IS DISTINCT FROM cardinality(p_pod_ids)
    OR cardinality(p_tokens) IS DISTINCT FROM cardinality(p_pod_ids)
    OR cardinality(p_record_ids) IS DISTINCT FROM cardinality(p_pod_ids) THEN
    RAISE EXCEPTION 'append_records needs arrays of one length and as many bodies'
      USING ERRCODE = '22023';
  END IF;
  WITH batch AS (
    SELECT b.n, b.pod_id, b.segment_no, b.seq, b.token, b.record_id, j.body
    FROM unnest(p_pod_ids, p_segment_nos, p_seqs, p_tokens, p_record_ids)
      WITH ORDINALITY AS b(pod_id, segment_no, seq, token, record_id, n)
    JOIN json_array_elements(p_bodies) WITH ORDINALITY AS j(body, n) USING (n)
  ), held AS (
    SELECT batch.n, batch.pod_id, batch.segment_no, batch.seq, batch.record_id, batch.body
    FROM batch JOIN {schema}.segments AS s
      ON s.pod_id = batch.pod_id AND s.segment_no = batch.segment_no AND s.writer_token = batch.token
    FOR KEY SHARE OF s
  ), inserted AS (
    INSERT INTO {schema}.records (pod_id, segment_no, seq, record_id, body)
    SELECT pod_id, segment_no, seq, record_id, body FROM held
  )
  SELECT array_agg(held.n::integer ORDER BY held.n) INTO stored FROM held;
  RETURN stored;
END
$$;
`,
  },
  {
    version: 4,
    name: "pod writer lease",
    sql: `
CREATE TABLE {schema}.pod_writers (
  pod_id text PRIMARY KEY,
  writer_token uuid,
  writer_epoch bigint NOT NULL DEFAULT 0,
  writer_host text,
  writer_pid integer,
  lease_expires_at timestamptz
);
`,
  },
];

/** SQLSTATE raised by `append_record` when the writer's token no longer holds the segment (nothing written). */
export const NOT_HELD_STATE = "IN001";

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The schema name, quoted for SQL; an `INVALID_ARGUMENT` error unless it is a plain lower-case identifier. */
export function quoteSchema(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new SegmentStoreError(
      "INVALID_ARGUMENT",
      `schema ${JSON.stringify(schema)} is not a plain identifier; use 1-63 of [a-z0-9_], not starting with a digit`,
    );
  }
  return `"${schema}"`;
}

/** Hex SHA-256 of a migration's text (schema-independent: taken before `{schema}` is filled in). */
export function migrationHash(migration: Migration): string {
  return createHash("sha256").update(migration.sql).digest("hex");
}

const SCHEMA_VERSION_KEY = "insomnia.segment-store-postgres";

/**
 * Brings `schema` up to the newest migration: in one transaction, under a transaction-level
 * advisory lock (so it also holds through a transaction-mode pooler), so processes starting at
 * once wait for each other and end with one schema. Refuses a database whose schema is newer
 * than this code, or whose applied migrations differ from this code's.
 */
export async function migrate(
  pool: Pool,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<void> {
  const quoted = quoteSchema(schema);
  const client: PoolClient = await pool.connect();
  let failed: unknown;
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`${SCHEMA_VERSION_KEY}:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        sha256 text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
    const applied = await client.query<{ version: number; name: string; sha256: string }>(
      `SELECT version, name, sha256 FROM ${quoted}.schema_migrations ORDER BY version`,
    );
    const known = new Map(migrations.map((m) => [m.version, m]));
    const newest = migrations.at(-1)?.version ?? 0;
    for (const row of applied.rows) {
      const migration = known.get(row.version);
      if (migration === undefined) {
        throw new SegmentStoreError(
          "SCHEMA_TOO_NEW",
          `schema ${schema} is at version ${applied.rows.at(-1)?.version} ("${row.name}" is version ${row.version}), ` +
            `but this @insomnia/segment-store-postgres knows versions up to ${newest}; upgrade the package (every process that opens this database needs it)`,
        );
      }
      if (migration.name !== row.name || migrationHash(migration) !== row.sha256) {
        throw new SegmentStoreError(
          "SCHEMA_MISMATCH",
          `schema ${schema}: migration ${row.version} ("${row.name}", sha256 ${row.sha256}) differs from this package's ` +
            `("${migration.name}", sha256 ${migrationHash(migration)}); the schema was changed by hand or by another build — restore it or use another schema`,
        );
      }
    }
    const done = new Set(applied.rows.map((row) => row.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql.replaceAll("{schema}", quoted));
      await client.query(`INSERT INTO ${quoted}.schema_migrations (version, name, sha256) VALUES ($1, $2, $3)`, [
        migration.version,
        migration.name,
        migrationHash(migration),
      ]);
    }
    await client.query("COMMIT");
  } catch (error) {
    failed = error;
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release(failed !== undefined && !SegmentStoreError.is(failed) ? (failed as Error) : undefined);
  }
}
