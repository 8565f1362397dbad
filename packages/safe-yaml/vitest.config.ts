import { defineConfig } from "vitest/config";
import { TEST_TIMEOUT_MS } from "../../test/support/property-runs.ts";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
  },
});
