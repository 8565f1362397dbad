import { defineConfig, type ViteUserConfig } from "vitest/config";
import { TEST_TIMEOUT_MS } from "./property-runs.ts";

type TestOptions = NonNullable<ViteUserConfig["test"]>;

/**
 * A package's test config: its `src/**\/*.test.ts`, the shared timeouts, and test files that
 * share their worker's modules (re-importing every module per file was a fifth of the suite's
 * CPU; a test that needs a fresh module state starts a process, as the CLI's runs of its bin
 * do). `options` adds to or overrides it.
 */
export function packageTests(options: TestOptions = {}): ViteUserConfig {
  return defineConfig({
    test: {
      include: ["src/**/*.test.ts"],
      isolate: false,
      testTimeout: TEST_TIMEOUT_MS,
      hookTimeout: TEST_TIMEOUT_MS,
      ...options,
    },
  });
}
