import { SegmentStoreError } from "../segment-store-error.ts";

/** The SegmentStoreError a promise rejects with (anything else is rethrown; resolving fails the test). */
export async function storeRejection(promise: Promise<unknown>): Promise<SegmentStoreError> {
  try {
    await promise;
  } catch (error) {
    if (SegmentStoreError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}
