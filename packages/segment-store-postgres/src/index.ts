export {
  DEFAULT_LEASE_MS,
  DEFAULT_RESOLVE_TIMEOUT_MS,
  openPostgresStore,
  PostgresSegmentStore,
  type PostgresSegmentStoreOptions,
} from "./postgres-segment-store.ts";
export { PostgresSegmentWriter } from "./postgres-segment-writer.ts";
export { MIGRATIONS, type Migration, migrate, migrationHash } from "./migrations.ts";
