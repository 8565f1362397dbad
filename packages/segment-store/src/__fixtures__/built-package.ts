import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { builtPackage } from "../../../../test/support/built-package.ts";

/** The file: URL of this package's built `dist/index.js`, which the tests' child processes and threads load. */
export const BUILT_PACKAGE_URL = pathToFileURL(builtPackage(join(import.meta.dirname, "..", ".."))).href;
