import { defineConfig } from "vitest/config";

const deep = process.env.INSOMNIA_DEEP_TESTS === "1";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    // A timeout only catches hangs: the quick run's slowest test takes a few seconds on a
    // loaded 2-core machine; the deep run (INSOMNIA_DEEP_TESTS=1) runs counts 5-10x larger.
    testTimeout: deep ? 300_000 : 60_000,
    hookTimeout: deep ? 300_000 : 60_000,
  },
});
