import { join } from "node:path";
import { builtPackage } from "../../../../test/support/built-package.ts";

/** This package's built `dist/index.js`, which the tests' child processes load. */
export const BUILT_PACKAGE = builtPackage(join(import.meta.dirname, "..", ".."));
