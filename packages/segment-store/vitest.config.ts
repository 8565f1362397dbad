import { defineConfig } from "vitest/config";
import { TEST_TIMEOUT_MS } from "../../test/support/property-runs.ts";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // The package built once from src for the tests whose child processes load it.
    globalSetup: ["../../test/support/package-bundle.ts"],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
  },
});
