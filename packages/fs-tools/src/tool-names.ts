/** Every file tool, by the name the model calls it (a contract: models know these from other agents). */
export const FS_TOOL_NAMES = ["edit_file", "list_dir", "read_file", "write_file"] as const;

/** The name of one file tool. */
export type FsToolName = (typeof FS_TOOL_NAMES)[number];

/** True when `name` is one of {@link FS_TOOL_NAMES}. */
export function isFsToolName(name: unknown): name is FsToolName {
  return typeof name === "string" && (FS_TOOL_NAMES as readonly string[]).includes(name);
}
