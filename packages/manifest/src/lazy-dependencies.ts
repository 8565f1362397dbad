import { createRequire } from "node:module";

type YamlModule = typeof import("yaml");
type ValibotModule = typeof import("valibot");

const require = createRequire(import.meta.url);
let yamlModule: YamlModule | undefined;
let valibotModule: ValibotModule | undefined;

// yaml and valibot are loaded on first use: most runs have no manifest file to parse or layer
// to check, and loading two libraries of that size is a large part of a cold `pod prompt`
// (bench/cli-cold.mjs measures it). ESM imports are always eager, so they are required, through their
// CommonJS builds: the same code an `import` loads, and the sync API stays sync.

/** The yaml package, loaded on first use. */
export function yaml(): YamlModule {
  yamlModule ??= require("yaml") as YamlModule;
  return yamlModule;
}

/**
 * The valibot functions this package calls, and nothing else (`valibot()` is typed to them, so
 * a function not listed does not compile). The `pod` bin bundles valibot from this list
 * (packages/cli/tsup.config.ts): a 10 KB file instead of the whole 134 KB library.
 */
export const VALIBOT_FUNCTIONS = [
  "array",
  "boolean",
  "check",
  "maxValue",
  "minValue",
  "nonEmpty",
  "number",
  "optional",
  "picklist",
  "pipe",
  "record",
  "regex",
  "safeInteger",
  "safeParse",
  "strictObject",
  "string",
] as const;

/** What this package uses of valibot. */
export type Valibot = Pick<ValibotModule, (typeof VALIBOT_FUNCTIONS)[number]>;

/** The valibot package, loaded on first use. */
export function valibot(): Valibot {
  valibotModule ??= require("valibot") as ValibotModule;
  return valibotModule;
}
