import { hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";

/**
 * What went wrong, as a code to check (never the message):
 * - `SEGMENT_NOT_FOUND`: no such segment for this pod.
 * - `SEGMENT_LOCKED`: another writer holds the segment's lease.
 * - `SEGMENT_FENCED`: this writer lost the segment (its lease was taken over); nothing was written.
 * - `SEGMENT_UNAVAILABLE`: the database could not be reached or the connection dropped; see `durable`.
 * - `SEGMENT_IO`: the writer is closed.
 * - `SEGMENT_CORRUPT`: a stored row is not a segment record.
 * - `INVALID_ARGUMENT`: a bad record, pod id, schema name or option.
 * - `SCHEMA_TOO_NEW`: the database's schema is newer than this package knows.
 * - `SCHEMA_MISMATCH`: an applied migration's hash differs from this package's.
 */
export type PostgresStoreErrorCode =
  | "SEGMENT_NOT_FOUND"
  | "SEGMENT_LOCKED"
  | "SEGMENT_FENCED"
  | "SEGMENT_UNAVAILABLE"
  | "SEGMENT_IO"
  | "SEGMENT_CORRUPT"
  | "INVALID_ARGUMENT"
  | "SCHEMA_TOO_NEW"
  | "SCHEMA_MISMATCH";

/** Options of a {@link PostgresStoreError}: the base's, plus whether a failed write is durable. */
export interface PostgresStoreErrorOptions extends InsomniaErrorOptions {
  durable?: boolean | "unknown" | undefined;
}

/** The error of `@insomnia/segment-store-postgres`. */
export class PostgresStoreError extends InsomniaError<PostgresStoreErrorCode> {
  static readonly brand: symbol = Symbol.for("insomnia.segment-store-postgres.error");
  override readonly name = "PostgresStoreError";
  /**
   * For a failed append or create: `false` when the record is certainly not stored (append it
   * again), `"unknown"` when the database could not be asked (append the same record again:
   * the writer recognizes it and writes it at most once). Absent for other errors.
   */
  declare readonly durable?: boolean | "unknown";

  constructor(code: PostgresStoreErrorCode, detail: string, options: PostgresStoreErrorOptions = {}) {
    super(code, detail, options);
    if (options.durable !== undefined) this.durable = options.durable;
  }

  static is(value: unknown): value is PostgresStoreError {
    return hasBrand(value, PostgresStoreError.brand);
  }
}
