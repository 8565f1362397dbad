import { packageTests } from "../../test/support/package-tests.ts";

// Isolated: a test checks that yaml is read on the first parse only.
export default packageTests({ isolate: true });
