/** The commands of `pod`. */
export const COMMAND_NAMES = ["prompt", "check", "init", "run", "resume", "compact", "log", "trust"] as const;
/** One command of `pod`. */
export type CommandName = (typeof COMMAND_NAMES)[number];
