import { build } from "tsup";
import config from "./tsup.config.ts";

/**
 * Builds the bin the process tests run. It goes to node_modules/.cache rather than dist/
 * because turbo runs this package's `build` task at the same time as `test`, and two
 * tsup runs cleaning the same dist/ would race. Same sources and tsup config, no d.ts.
 */
export const TEST_BUILD_DIR = "node_modules/.cache/pod-cli-test/dist";

export default async function setup(): Promise<void> {
  const base = typeof config === "function" ? {} : Array.isArray(config) ? config[0] : config;
  await build({ ...base, outDir: TEST_BUILD_DIR, dts: false, silent: true, config: false });
}
