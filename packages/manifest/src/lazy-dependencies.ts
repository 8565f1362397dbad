import { createRequire } from "node:module";

type ValibotModule = typeof import("valibot");

const require = createRequire(import.meta.url);
let valibotModule: ValibotModule | undefined;

// valibot is loaded on first use: most runs have no layer to check, and loading it is a large
// part of a cold `pod prompt`. An ESM import is always eager, so it is required (its CommonJS build).

/** The valibot package (all of it). */
export type Valibot = ValibotModule;

/** The valibot package, loaded on first use. */
export function valibot(): Valibot {
  valibotModule ??= require("valibot") as ValibotModule;
  return valibotModule;
}
