import { build } from "tsup";
import { binConfig } from "./tsup.config.ts";

/**
 * Builds the bin the process tests run. It goes to node_modules/.cache rather than dist/
 * because turbo runs this package's `build` task at the same time as `test`, and two
 * tsup runs cleaning the same dist/ would race. Same sources and the same bin config as dist/.
 */
export const TEST_BUILD_DIR = "node_modules/.cache/pod-cli-test/dist";

export default async function setup(): Promise<void> {
  await build({ ...binConfig(TEST_BUILD_DIR), clean: true, silent: true, config: false });
}
