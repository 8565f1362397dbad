/** The deep run (`pnpm test:deep`, or INSOMNIA_DEEP_TESTS=1): property tests run their full counts before a release. */
export const DEEP_TESTS = process.env.INSOMNIA_DEEP_TESTS === "1";

/** A property test's case count: `deep` on the deep run, `quick` (sized so a suite takes seconds) otherwise. */
export function propertyRuns(quick: number, deep: number): number {
  return DEEP_TESTS ? deep : quick;
}

/**
 * Per-test timeout: a minute still shows a hang quickly, with room for the slowest quick test
 * (about 20 s while every package's suite shares 2 cores); the deep run's full counts take minutes.
 */
export const TEST_TIMEOUT_MS = DEEP_TESTS ? 900_000 : 60_000;

/** Timeout of a test that is slow by design (an input at a size limit, every byte offset of a log). */
export const SLOW_TEST_TIMEOUT_MS = DEEP_TESTS ? 900_000 : 120_000;
