import { packageTests } from "../../test/support/package-tests.ts";

// The package built once from src for the tests whose child processes load it.
export default packageTests({ globalSetup: ["../../test/support/package-bundle.ts"] });
