import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // Generous: a timeout here only catches hangs; the suites run side by side on 2 cores in CI.
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
