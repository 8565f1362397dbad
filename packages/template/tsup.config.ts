import { defineConfig } from "tsup";
import { baseConfig } from "../../tsup.base.ts";

export default defineConfig({
  ...baseConfig,
  entry: ["src/index.ts"],
  // prebuilt-asts.ts imports handlebars/package.json `with { type: "json" }`: esbuild keeps that for
  // the engines floor (Node 20.10+ has import attributes); tsup's Rollup pass would write the
  // deprecated `assert`, and esbuild tree-shakes the bundle itself.
  target: "node20.19",
  treeshake: false,
});
