import { AiSdkError } from "../ai-sdk-error.ts";

/** The AiSdkError `promise` rejects with (anything else is rethrown; a fulfilment fails the test). */
export async function rejection(promise: Promise<unknown>): Promise<AiSdkError> {
  try {
    await promise;
  } catch (thrown) {
    if (AiSdkError.is(thrown)) return thrown;
    throw thrown;
  }
  throw new Error("expected a rejection");
}
