import { defineConfig } from "vitest/config";

/** Repository-wide checks (architecture, packaging); package tests run through turbo. */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
