/** Prompt reference used when no layer sets `worker.instruction`. */
export const DEFAULT_INSTRUCTION = "$insomnia/default";

/** Prompt reference used when no layer sets `worker.compact_instruction`: what a compaction summary must keep. */
export const DEFAULT_COMPACT_INSTRUCTION = "$insomnia/compact";

/** Default `worker.compact_at`: the fraction of the context window at which a conversation is compacted. */
export const DEFAULT_COMPACT_AT = 0.8;

/** Default `worker.max_tokens`. */
export const DEFAULT_MAX_TOKENS = 8192;

/** Default `worker.max_turns`. */
export const DEFAULT_MAX_TURNS = 50;

/** Default `worker.temperature`. */
export const DEFAULT_TEMPERATURE = 0;

/** Default `skills.budget`: characters the skills listing of a prompt may take. */
export const DEFAULT_SKILLS_BUDGET = 8000;

/**
 * The tools `worker.tools` may name: the file tools and `run_command` (kept equal to
 * `FS_TOOL_NAMES` of @insomnia/fs-tools plus `RUN_COMMAND_TOOL_NAME` of @insomnia/sandbox by a
 * repository test; the manifest cannot import them).
 */
export const WORKER_TOOL_NAMES: readonly string[] = Object.freeze([
  "edit_file",
  "list_dir",
  "read_file",
  "run_command",
  "write_file",
]);

/** `worker.tools` when no layer sets it: the four file tools (`run_command` is enabled by naming it). */
export const DEFAULT_WORKER_TOOLS: readonly string[] = Object.freeze([
  "edit_file",
  "list_dir",
  "read_file",
  "write_file",
]);

/** Default `worker.run_command.timeout_ms`: the longest a command may run (and its timeout when the call names none). */
export const DEFAULT_RUN_COMMAND_TIMEOUT_MS = 120_000;

/** Pod name used when `pod.pwd` has no basename (it is `/`). */
export const DEFAULT_POD_NAME = "pod";

/** Project layer location, relative to the directory the pod is started in. */
export const PROJECT_MANIFEST_PATH = ".insomnia/pod.yaml";

/** User layer location, relative to the config directory ($XDG_CONFIG_HOME or ~/.config). */
export const USER_MANIFEST_PATH = "insomnia/pod.yaml";

/** Largest manifest file or text accepted, in bytes (256 KiB). */
export const MAX_MANIFEST_BYTES = 256 * 1024;

/** Deepest YAML nesting accepted; a valid manifest needs 4 levels. */
export const MAX_MANIFEST_DEPTH = 32;

/** Default `mcp_servers.<name>.startup_timeout_ms`: how long a server may take to start and list its tools. */
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 10_000;

/** Default `mcp_servers.<name>.tool_timeout_ms`: how long one call to a server's tool may take. */
export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 60_000;
