import { packageTests } from "../../test/support/package-tests.ts";

// Isolated: lazy-dependencies.test.ts checks which modules a fresh load has read.
export default packageTests({ isolate: true });
