import { createRequire } from "node:module";

type YamlModule = typeof import("yaml");

const require = createRequire(import.meta.url);
let yamlModule: YamlModule | undefined;

// Loaded on first use: most `pod` runs have no YAML to parse, and importing yaml is a large
// part of a cold start. An ESM import is always eager, so it is required (its CommonJS build).

/** The yaml package, loaded on first use. */
export function yaml(): YamlModule {
  yamlModule ??= require("yaml") as YamlModule;
  return yamlModule;
}
