import { packageTests } from "../../test/support/package-tests.ts";

// One throwaway PostgreSQL server (and a data-dir template for tests that need their own) for the run.
export default packageTests({ globalSetup: ["src/__fixtures__/global-setup.ts"] });
