import { createRequire } from "node:module";

type YamlModule = typeof import("yaml");

let loaded: YamlModule | undefined;

/**
 * The yaml package, loaded on first use. Loading it costs more than the rest of a cold
 * `pod prompt` together, and most runs have no manifest file to parse; ESM imports are
 * always eager, so it is required here (yaml's Node entry is CommonJS, the same module an
 * `import` would load).
 */
export function yaml(): YamlModule {
  loaded ??= createRequire(import.meta.url)("yaml") as YamlModule;
  return loaded;
}
