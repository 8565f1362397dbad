import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    globalSetup: ["./vitest.global-setup.ts"],
    // A timeout here only catches hangs, so it can be short: a hang shows in 20 s, not 5 minutes.
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
