export {
  type DetectOptions,
  detectSandbox,
  findOnPath,
  INSTALL_HINT,
  NAMESPACE_HINT,
  type SandboxAvailability,
} from "./availability.ts";
export type { MountOp } from "./mount-plan.ts";
export {
  DEFAULT_MAX_PROCESSES,
  detectProcessLimit,
  PROCESS_LIMIT_HINT,
  type ProcessLimit,
  type ProcessLimitProbe,
  processLimitWarning,
} from "./process-limit.ts";
export type { CapturedOutput } from "./output-capture.ts";
export {
  DEFAULT_COMMAND_OUTPUT_BYTES,
  DEFAULT_COMMAND_TIMEOUT_MS,
  MAX_COMMAND_BYTES,
  RUN_COMMAND_TOOL_NAME,
  type RunCommandExecuteOptions,
  type RunCommandTool,
  type RunCommandToolOptions,
  runCommandTool,
} from "./run-command-tool.ts";
export {
  type CommandResult,
  DEFAULT_PATH,
  Sandbox,
  type SandboxOptions,
  type SandboxRunOptions,
} from "./sandbox.ts";
export { SandboxError, type SandboxErrorCode, type SandboxErrorOptions } from "./sandbox-error.ts";
export { SYSTEM_DIRS } from "./system-paths.ts";
