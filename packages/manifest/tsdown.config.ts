import { defineConfig } from "tsdown";
import { baseConfig } from "../../tsdown.base.ts";

export default defineConfig({
  ...baseConfig,
  // The manifest types are inferred from the valibot schema, which only a TypeScript program can write out.
  dts: { oxc: false },
});
