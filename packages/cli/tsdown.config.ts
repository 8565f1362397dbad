import { defineConfig } from "tsdown";
import { baseConfig } from "../../tsdown.base.ts";

// The library entry, `import { main } from "@insomnia/cli"`; the `pod` bin is tsup.config.ts's.
export default defineConfig({ ...baseConfig, clean: false });
