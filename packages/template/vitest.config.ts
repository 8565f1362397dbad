import { DEEP_TESTS } from "../../test/support/property-runs.ts";
import { packageTests } from "../../test/support/package-tests.ts";

// A timeout only catches hangs: the quick run's slowest test takes a few seconds on a loaded
// 2-core machine; the deep run (INSOMNIA_DEEP_TESTS=1) runs counts 5-10x larger.
export default packageTests({ testTimeout: DEEP_TESTS ? 300_000 : 60_000, hookTimeout: DEEP_TESTS ? 300_000 : 60_000 });
