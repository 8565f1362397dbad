import { errorText, hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";

/**
 * Machine-readable reason of a {@link SegmentStoreError}; the codes are a contract, every store
 * uses the same ones for the same situation.
 */
export type SegmentStoreErrorCode =
  /** The stored data of a segment is damaged before its end, or is not a segment at all; it was left as it is. */
  | "SEGMENT_CORRUPT"
  /** Another writer (in this or another thread, process or machine) holds the segment. */
  | "SEGMENT_LOCKED"
  /** No segment with that id (or the id is not one). */
  | "SEGMENT_NOT_FOUND"
  /** The backing storage could not be read or written; an append that fails so is not acknowledged. */
  | "SEGMENT_IO"
  /** This writer lost the segment (its lock was taken over); it can never append again, and nothing was written. */
  | "SEGMENT_FENCED"
  /** A record that is not plain JSON data of the right shape, or not allowed at that place. */
  | "INVALID_ARGUMENT"
  /**
   * A store on a server (a database) could not be reached, or the connection dropped; for an
   * append or a create, `durable` says whether the record was stored.
   */
  | "SEGMENT_UNAVAILABLE"
  /** The backing data was laid out by a newer version of the store than this one (upgrade the package). */
  | "SCHEMA_TOO_NEW"
  /** The backing data's layout differs from what this version of the store made (changed by hand or by another build). */
  | "SCHEMA_MISMATCH";

/** Who holds a segment's lock, and until when: the fields of a `SEGMENT_LOCKED` error. */
export interface SegmentLockHolder {
  /** The writer's process id, when the store knows it. */
  readonly pid?: number;
  /** The writer's host name, when the store knows it. */
  readonly host?: string;
  /** When the lock runs out if its writer stops renewing it (RFC 3339), for stores whose locks expire. */
  readonly expiresAt?: string;
  /** Milliseconds from the error until `expiresAt`: a service's `Retry-After`. */
  readonly retryAfterMs?: number;
}

/** Options of a {@link SegmentStoreError}: the base's, plus whether a failed write is durable. */
export interface SegmentStoreErrorOptions extends InsomniaErrorOptions {
  /** See {@link SegmentStoreError.durable}. */
  durable?: boolean | "unknown" | undefined;
  /** See {@link SegmentStoreError.lock}. */
  lock?: SegmentLockHolder | undefined;
}

/** The one error class of @insomnia/segment-store, and of every store implementing its interface. */
export class SegmentStoreError extends InsomniaError<SegmentStoreErrorCode> {
  static readonly brand: symbol = Symbol.for("insomnia.segment-store.error");
  override readonly name = "SegmentStoreError";
  /**
   * Set on a failed append or create by stores that can lose a connection mid-write:
   * `false` when the record is certainly not stored (append it again); `"unknown"` when the
   * store could not find out (append the same record again: a store that sets this writes it
   * at most once). Absent on every other error, and when a failed append is never stored.
   */
  declare readonly durable?: boolean | "unknown";
  /**
   * Set on `SEGMENT_LOCKED`: the holder and, where locks expire, when (fields, so a service
   * maps them to its answer without reading the message).
   */
  declare readonly lock?: SegmentLockHolder;

  constructor(code: SegmentStoreErrorCode, detail: string, options: SegmentStoreErrorOptions = {}) {
    super(code, detail, options);
    if (options.durable !== undefined) this.durable = options.durable;
    if (options.lock !== undefined) this.lock = options.lock;
  }

  /** True for a SegmentStoreError from any installed copy of this package. */
  static is(value: unknown): value is SegmentStoreError {
    return hasBrand(value, SegmentStoreError.brand);
  }
}

/** A failed file-system call as a SEGMENT_IO error (one of ours passes through as it is). */
export function segmentIoError(file: string, action: string, cause: unknown): SegmentStoreError {
  if (SegmentStoreError.is(cause)) return cause;
  return new SegmentStoreError("SEGMENT_IO", `cannot ${action}: ${errorText(cause)}`, { file, cause });
}

/** The `code` of a Node.js system error (ENOENT, EEXIST, …), if any. */
export function systemErrorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}
