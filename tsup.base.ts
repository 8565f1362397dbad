import type { Options } from "tsup";

/**
 * Shared tsup settings of what is not a library (the libraries build with tsdown): the `pod` bin
 * and the example service. Each names its own entries; neither writes declarations.
 */
export const baseConfig = {
  format: ["esm"],
  platform: "node",
  target: "node20",
  clean: true,
  sourcemap: false,
  splitting: true,
  treeshake: true,
} satisfies Options;
