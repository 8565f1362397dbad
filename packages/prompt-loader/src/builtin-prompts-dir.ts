import { fileURLToPath } from "node:url";

/** Directory of the builtin ($insomnia) prompts inside the installed package. */
// From dist/*.js and from src/*.ts alike, "../prompts/" is <package>/prompts/.
export const BUILTIN_PROMPTS_DIR: string = fileURLToPath(new URL("../prompts/", import.meta.url));
