import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// In the package, dist/*.js and src/*.ts find <package>/prompts/ one level up; a bundle that
// inlines this module (the `pod` bin) ships the prompts directory beside itself.
const besideModule = fileURLToPath(new URL("./prompts/", import.meta.url));

/** Directory of the builtin ($insomnia) prompts: beside this module when it is bundled, else the package's `prompts/`. */
export const BUILTIN_PROMPTS_DIR: string = existsSync(besideModule)
  ? besideModule
  : fileURLToPath(new URL("../prompts/", import.meta.url));
