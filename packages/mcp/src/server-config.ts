/** A server started as a child process that speaks MCP on its stdin/stdout. */
export interface StdioServerTransportConfig {
  readonly type: "stdio";
  readonly command: string;
  readonly args?: readonly string[] | undefined;
  /** Variables added to the minimal environment the server inherits (PATH, HOME, USER, …). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Working directory of the server (default: the caller's `cwd` option). */
  readonly cwd?: string | undefined;
}

/** A server reached over MCP's streamable HTTP transport. */
export interface HttpServerTransportConfig {
  readonly type: "http";
  readonly url: string;
  /** Header name → name of the environment variable holding its value (secrets stay out of manifests). */
  readonly headersFromEnv?: Readonly<Record<string, string>> | undefined;
}

/** One MCP server, as the manifest's `mcp_servers.<name>` describes it. */
export interface McpServerConfig {
  /** The server's name: tools are offered as `mcp__<name>__<tool>`. */
  readonly name: string;
  readonly transport: StdioServerTransportConfig | HttpServerTransportConfig;
  /** How long the server may take to start and list its tools (default 10,000 ms). */
  readonly startupTimeoutMs?: number | undefined;
  /** How long one tool call may take (default 60,000 ms). */
  readonly toolTimeoutMs?: number | undefined;
  /** When set, only these tools (the server's own names) are offered. */
  readonly enabledTools?: readonly string[] | undefined;
  /** These tools (the server's own names) are never offered. */
  readonly disabledTools?: readonly string[] | undefined;
}

/** Default `startup_timeout_ms`. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;
/** Default `tool_timeout_ms`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
