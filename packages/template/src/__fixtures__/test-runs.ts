/**
 * Property tests run a count sized so the package's suite takes seconds; with
 * INSOMNIA_DEEP_TESTS=1 (`pnpm test:deep`, run before a release) they run their deep counts,
 * which cover everything the quick ones do and far more cases.
 */
export const DEEP_TESTS = process.env.INSOMNIA_DEEP_TESTS === "1";

/** `quick` cases by default, `deep` under INSOMNIA_DEEP_TESTS=1. */
export function runs(quick: number, deep: number): number {
  return DEEP_TESTS ? deep : quick;
}
