import pg from "pg";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ChildWriter } from "./__fixtures__/child-writer.ts";
import { sharedConnectionString, storeRejection } from "./__fixtures__/stores.ts";
import { MIGRATIONS, migrationHash } from "./migrations.ts";
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

test("twenty_processes_starting_at_once_end_with_one_schema", async () => {
  const schema = "migrate_race";
  const children = Array.from(
    { length: 20 },
    (_, i) => new ChildWriter({ connectionString: sharedConnectionString(), podId: `p${i}`, mode: "migrate", schema }),
  );
  const exits = await Promise.all(children.map((child) => child.exited));
  expect(exits).toEqual(children.map(() => 0));
  expect(children.map((child) => child.lines)).toEqual(children.map(() => ["ok"]));
  expect(await tables(schema)).toEqual(["pods", "records", "schema_migrations", "segments"]);
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
  expect(error.message).toMatch(/version 999.*knows versions up to 1; upgrade the package/);
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
  expect(await tables(schema)).toEqual(["pods", "records", "schema_migrations", "segments"]);
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
