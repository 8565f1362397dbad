import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
    // The same copy as `build`, so tests read the builtin prompts from src/../prompts.
    globalSetup: ["./scripts/copy-prompts.mjs"],
  },
});
