/** Machine-readable reason of an {@link McpWarning}. */
export type McpWarningCode =
  /** A server did not start or list its tools within its startup timeout: the pod runs without it. */
  | "MCP_SERVER_UNAVAILABLE"
  /** A tool was left out: its full name is too long, has characters providers refuse, or is listed twice. */
  | "MCP_TOOL_NAME_REFUSED"
  /** On restore, a server now lists other tools than the frozen list recorded. */
  | "TOOLS_CHANGED";

/** Something about the MCP servers a user should know; the pod went on without it. */
export interface McpWarning {
  readonly code: McpWarningCode;
  readonly message: string;
  /** The server the warning is about. */
  readonly server: string;
}
