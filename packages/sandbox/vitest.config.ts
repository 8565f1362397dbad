import { defineConfig } from "vitest/config";
import { sandboxGate } from "../../test/support/sandbox-gate.ts";

const gate = sandboxGate();
// The one visible line of a machine without bubblewrap; every other test of the repository runs.
if (!gate.available) console.log(gate.line);

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Tests that run bwrap are named *.sandbox.test.ts; without bubblewrap only those are left out.
    exclude: gate.available ? [] : ["src/**/*.sandbox.test.ts"],
    passWithNoTests: true,
    // Generous: a timeout here only catches hangs; the suites run side by side on 2 cores in CI.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
