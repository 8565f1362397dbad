import { ManifestError } from "../manifest-error.ts";

/** The ManifestError `run` throws (anything else is rethrown; returning fails the test). */
export function manifestErrorOf(run: () => unknown): ManifestError {
  try {
    run();
  } catch (error) {
    if (ManifestError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a ManifestError");
}

/** The ManifestError a promise rejects with (anything else is rethrown; resolving fails the test). */
export async function manifestRejection(promise: Promise<unknown>): Promise<ManifestError> {
  try {
    await promise;
  } catch (error) {
    if (ManifestError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a ManifestError");
}

/** Code and position of an error, for one-line assertions. */
export function where(error: ManifestError) {
  return { code: error.code, file: error.file, line: error.line, column: error.column };
}
