import { packageTests } from "../../test/support/package-tests.ts";
import { sandboxGate } from "../../test/support/sandbox-gate.ts";

export default packageTests({
  // run_command's escape suite needs bubblewrap; @insomnia/sandbox's tests print the one line saying it was left out.
  exclude: sandboxGate().available ? [] : ["src/**/*.sandbox.test.ts"],
  globalSetup: ["./vitest.global-setup.ts"],
});
