import { packageTests } from "../../test/support/package-tests.ts";

// The same copy as `build`, so tests read the builtin prompts from src/../prompts.
export default packageTests({ globalSetup: ["./scripts/copy-prompts.mjs"] });
