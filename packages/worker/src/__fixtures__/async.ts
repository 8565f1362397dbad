import { WorkerError } from "../worker-error.ts";

/** A promise with its resolve function, for holding a tool or client until a test lets go. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The WorkerError a promise rejects with (anything else is rethrown). */
export async function caught(promise: Promise<unknown>): Promise<WorkerError> {
  try {
    await promise;
  } catch (error) {
    if (WorkerError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}
