import type { Options } from "tsup";

/** Shared build settings: ESM only, declarations, Node 20. Packages spread this. */
export const baseConfig = {
  entry: ["src/index.ts"],
  format: ["esm"],
  platform: "node",
  target: "node20",
  // Declarations only: `typecheck` (tsc over src and tests) is the type check, not done twice.
  dts: { compilerOptions: { noCheck: true } },
  clean: true,
  sourcemap: false,
  splitting: true,
  treeshake: true,
} satisfies Options;
