import { defineConfig } from "vitest/config";

/** Repository-wide checks (architecture, packaging); package tests run through turbo. */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**"],
    testTimeout: 120_000,
  },
});
