/**
 * Property tests run a count sized so the package's suite takes seconds; with
 * INSOMNIA_DEEP_TESTS=1 (`pnpm test:deep`, run before a release) they run their deep counts,
 * which cover everything the quick ones do and far more cases. The switch is the repository's
 * one (test/support/property-runs.ts), so every package's deep run is chosen the same way.
 */
export { DEEP_TESTS, propertyRuns as runs } from "../../../../test/support/property-runs.ts";
