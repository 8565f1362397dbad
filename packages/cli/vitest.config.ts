import { defineConfig } from "vitest/config";
import { sandboxGate } from "../../test/support/sandbox-gate.ts";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // run_command's escape suite needs bubblewrap; @insomnia/sandbox's tests print the one line saying it was left out.
    exclude: sandboxGate().available ? [] : ["src/**/*.sandbox.test.ts"],
    globalSetup: ["./vitest.global-setup.ts"],
    // Generous: a timeout here only catches hangs; the suites run side by side on 2 cores in CI.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
