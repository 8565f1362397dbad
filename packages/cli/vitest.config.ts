import { defineConfig } from "vitest/config";
import { TEST_TIMEOUT_MS } from "../../test/support/property-runs.ts";
import { sandboxGate } from "../../test/support/sandbox-gate.ts";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // run_command's escape suite needs bubblewrap; @insomnia/sandbox's tests print the one line saying it was left out.
    exclude: sandboxGate().available ? [] : ["src/**/*.sandbox.test.ts"],
    globalSetup: ["./vitest.global-setup.ts"],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
  },
});
