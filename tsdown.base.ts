import type { UserConfig } from "tsdown";

/**
 * Shared build settings: ESM only, Node 20, `index.js` and `index.d.ts` as each package's
 * exports name them. Declarations come from oxc's isolated-declarations emitter, one file at a
 * time with no TypeScript program, so exported values carry their types (`typecheck` is the type check).
 */
export const baseConfig = {
  entry: ["src/index.ts"],
  format: "esm",
  platform: "node",
  target: "node20.19",
  fixedExtension: false,
  dts: { oxc: true },
  clean: true,
  sourcemap: false,
} satisfies UserConfig;
