import { createRequire } from "node:module";

type ValibotModule = typeof import("valibot");

let loaded: ValibotModule | undefined;

/**
 * The valibot package, loaded on first use: only a manifest layer (a file or an overlay)
 * needs validating, and a run without one should not pay for loading it (about 9 ms of a
 * cold `pod prompt`). Required through its CommonJS build, the same code as its ES module,
 * because ESM imports are always eager.
 */
export function valibot(): ValibotModule {
  loaded ??= createRequire(import.meta.url)("valibot") as ValibotModule;
  return loaded;
}
