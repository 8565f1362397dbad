import { PodError } from "../pod-error.ts";

/** The PodError a promise rejects with (anything else is rethrown; resolving fails the test). */
export async function podRejection(promise: Promise<unknown>): Promise<PodError> {
  try {
    await promise;
  } catch (error) {
    if (PodError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}
