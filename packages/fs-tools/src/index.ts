export { DEFAULT_LIMITS, type FsToolsLimits } from "./limits.ts";
export type { FsTool } from "./fs-tool.ts";
export { type FsToolsOptions, fsTools, pickFsTools } from "./fs-tools.ts";
export { FsToolsError, type FsToolsErrorCode, type FsToolsErrorOptions } from "./fs-tools-error.ts";
export { FS_TOOL_NAMES, type FsToolName, isFsToolName } from "./tool-names.ts";
export { MAX_PATH_LENGTH } from "./tool-input.ts";
export { MAX_NEW_DIRECTORIES } from "./locate.ts";
