import { defineConfig } from "tsdown";
import { baseConfig } from "../../tsdown.base.ts";

export default defineConfig({
  ...baseConfig,
  // `testing` is its own entry: it imports vitest (an optional peer), the main entry never does.
  entry: { index: "src/index.ts", testing: "src/testing/index.ts" },
});
