import { defineConfig } from "tsup";
import { baseConfig } from "../../tsup.base.ts";

export default defineConfig({
  ...baseConfig,
  entry: ["src/index.ts", "src/bin.ts"],
  // The base error is a few lines every command needs, --help and --version included: inlined,
  // so the bin starts without resolving a package. Brands are Symbol.for(), so an inlined copy
  // and the packages' own copy recognise each other's errors.
  noExternal: ["@insomnia/errors"],
});
