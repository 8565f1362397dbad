export { EXIT, main } from "./main.ts";
export type { CliIo } from "./io.ts";
export type { OutputStream } from "./output.ts";
