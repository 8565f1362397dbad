/** The deep run (`pnpm test:deep`, or INSOMNIA_DEEP_TESTS=1): property tests run their full counts before a release. */
export const DEEP_TESTS = process.env.INSOMNIA_DEEP_TESTS === "1";

/** A property test's case count: `deep` on the deep run, `quick` (sized so a suite takes seconds) otherwise. */
export function propertyRuns(quick: number, deep: number): number {
  return DEEP_TESTS ? deep : quick;
}

/**
 * Per-test timeout: 20 s shows a hang quickly; the slowest quick test takes a few seconds even
 * while every package's suite shares 2 cores. The deep run's full counts take minutes.
 */
export const TEST_TIMEOUT_MS = DEEP_TESTS ? 900_000 : 20_000;

/** Timeout of a test that is slow by design (an input at a size limit, every byte offset of a log, a race of many rounds). */
export const SLOW_TEST_TIMEOUT_MS = DEEP_TESTS ? 900_000 : 60_000;
