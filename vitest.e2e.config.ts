import { defineConfig } from "vitest/config";

/** End-to-end checks that need a real registry; run by `pnpm test` after the other checks, or alone by `pnpm test:e2e`. */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
