import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTestStores, openTestStore, sharedConnectionString, storeRejection } from "./__fixtures__/stores.ts";
import { PostgresSegmentStore } from "./postgres-segment-store.ts";

let admin: pg.Pool;
beforeAll(() => {
  admin = new pg.Pool({ connectionString: sharedConnectionString(), max: 1 });
});
afterAll(async () => {
  await closeTestStores();
  await admin.end();
});

async function schemaExists(schema: string): Promise<boolean> {
  const { rows } = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  return rows.length > 0;
}

describe("opening a PostgreSQL store", () => {
  it("a_reader_open_creates_nothing_in_an_empty_schema", async () => {
    const schema = `empty_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const error = await storeRejection(
      PostgresSegmentStore.open({
        connectionString: sharedConnectionString(),
        podId: "reader",
        schema,
        createSchema: false,
      }),
    );
    expect(error.code).toBe("SEGMENT_NOT_FOUND");
    expect(error.detail).toMatch(/holds no segments yet .*nothing was created/);
    expect(await schemaExists(schema)).toBe(false);
    // Once a writer made the tables, a reader opens the schema.
    await openTestStore({ schema });
    const reader = await PostgresSegmentStore.open({
      connectionString: sharedConnectionString(),
      podId: "reader",
      schema,
      createSchema: false,
    });
    expect(await reader.latestSegment()).toBeUndefined();
    await reader.close();
  });

  it("a_database_that_does_not_exist_is_named_so_not_as_permissions", async () => {
    const url = new URL(sharedConnectionString());
    url.pathname = "/no_such_database";
    const error = await storeRejection(PostgresSegmentStore.open({ connectionString: url.href, podId: "p" }));
    expect(error.code).toBe("SEGMENT_UNAVAILABLE");
    expect(error.detail).toMatch(/"no_such_database" does not exist: create it \(e\.g\. createdb <name>\)/);
    expect(error.detail).not.toMatch(/may create schemas/);
  });
});
