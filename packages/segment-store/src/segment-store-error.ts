import { hasBrand, InsomniaError } from "@insomnia/errors";

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
  | "INVALID_ARGUMENT";

/** The one error class of @insomnia/segment-store, and of every store implementing its interface. */
export class SegmentStoreError extends InsomniaError<SegmentStoreErrorCode> {
  static readonly brand: symbol = Symbol.for("insomnia.segment-store.error");
  override readonly name = "SegmentStoreError";

  /** True for a SegmentStoreError from any installed copy of this package. */
  static is(value: unknown): value is SegmentStoreError {
    return hasBrand(value, SegmentStoreError.brand);
  }
}
