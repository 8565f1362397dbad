import pg from "pg";
import { afterAll, beforeAll, expect, test } from "vitest";
import { SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { ChildWriter } from "./__fixtures__/child-writer.ts";
import { sharedConnectionString, storeRejection } from "./__fixtures__/stores.ts";
import { MIGRATIONS, migrate, migrationHash } from "./migrations.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";

let admin: pg.Pool;
beforeAll(() => {
  admin = new pg.Pool({ connectionString: sharedConnectionString(), max: 2 });
});
afterAll(async () => {
  await admin.end();
});

async function tables(schema: string): Promise<string[]> {
  const { rows } = await admin.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
    [schema],
  );
  return rows.map((row) => row.name);
}

test("twenty_processes_starting_at_once_end_with_one_schema", { timeout: SLOW_TEST_TIMEOUT_MS }, async () => {
  const schema = "migrate_race";
  const children = Array.from(
    { length: 20 },
    (_, i) => new ChildWriter({ connectionString: sharedConnectionString(), podId: `p${i}`, mode: "migrate", schema }),
  );
  const exits = await Promise.all(children.map((child) => child.exited));
  expect(exits).toEqual(children.map(() => 0));
  expect(children.map((child) => child.lines)).toEqual(children.map(() => ["ok"]));
  expect(await tables(schema)).toEqual(["pod_writers", "pods", "records", "schema_migrations", "segments"]);
  const { rows } = await admin.query(`SELECT version, name, sha256 FROM ${schema}.schema_migrations ORDER BY version`);
  expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, sha256: migrationHash(m) })));
});

test("a_schema_newer_than_the_code_is_refused_with_what_to_do", async () => {
  const schema = "migrate_newer";
  const first = await PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: "p", schema });
  await first.close();
  await admin.query(
    `INSERT INTO ${schema}.schema_migrations (version, name, sha256) VALUES (999, 'from the future', 'x')`,
  );
  const error = await storeRejection(
    PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: "p", schema }),
  );
  expect(error.code).toBe("SCHEMA_TOO_NEW");
  expect(error.message).toMatch(
    new RegExp(`version 999.*knows versions up to ${MIGRATIONS.at(-1)?.version}; upgrade the package`),
  );
});

test("an_applied_migration_that_differs_from_the_code_is_refused", async () => {
  const schema = "migrate_changed";
  const first = await PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: "p", schema });
  await first.close();
  await admin.query(`UPDATE ${schema}.schema_migrations SET sha256 = 'edited' WHERE version = 1`);
  const error = await storeRejection(
    PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: "p", schema }),
  );
  expect(error.code).toBe("SCHEMA_MISMATCH");
  expect(error.message).toMatch(/migration 1 \("segment log", sha256 edited\) differs/);
  expect(await tables(schema)).toEqual(["pod_writers", "pods", "records", "schema_migrations", "segments"]);
});

test("migrating_twice_changes_nothing", async () => {
  const schema = "migrate_twice";
  for (let i = 0; i < 2; i += 1) {
    const store = await PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: "p", schema });
    await store.close();
  }
  const { rows } = await admin.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${schema}.schema_migrations`);
  expect(rows).toEqual([{ n: String(MIGRATIONS.length) }]);
});

test("a_database_of_version_1_is_upgraded_and_keeps_its_segments", async () => {
  const schema = "migrate_from_1";
  const v1 = MIGRATIONS.filter((m) => m.version === 1);
  const oldPool = new pg.Pool({ connectionString: sharedConnectionString(), max: 1 });
  try {
    await migrate(oldPool, schema, v1);
    // A segment written by version-1 code: the segment row and record 0 as its create statement made them,
    // record 1 by its append statement.
    await oldPool.query(
      `INSERT INTO ${schema}.pods (pod_id, last_segment_no) VALUES ('old', 1);
       INSERT INTO ${schema}.segments (pod_id, segment_no, start_record_id) VALUES ('old', 1, gen_random_uuid());
       INSERT INTO ${schema}.records (pod_id, segment_no, seq, record_id, body) VALUES
         ('old', 1, 0, gen_random_uuid(), '{"type":"segment_start","systemPrompt":"p","sources":[],"createdAt":"2025-01-01T00:00:00Z"}'),
         ('old', 1, 1, gen_random_uuid(), '{"type":"message","message":{"role":"user","content":"one"}}')`,
    );
  } finally {
    await oldPool.end();
  }
  const store = await PostgresSegmentStore.open({ connectionString: sharedConnectionString(), podId: "old", schema });
  try {
    const { rows } = await admin.query(
      `SELECT version, name, sha256 FROM ${schema}.schema_migrations ORDER BY version`,
    );
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, sha256: migrationHash(m) })));
    const opened = await store.openSegment("seg-0000000001");
    await opened.writer.append({ type: "message", message: { role: "assistant", content: "two" } });
    await opened.writer.close();
    const { records } = await store.readSegment("seg-0000000001");
    expect(records.slice(1)).toEqual([
      { type: "message", message: { role: "user", content: "one" } },
      { type: "message", message: { role: "assistant", content: "two" } },
    ]);
  } finally {
    await store.close();
  }
});
