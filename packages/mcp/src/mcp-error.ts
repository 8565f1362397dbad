import { hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";

/**
 * Why an MCP tool call failed (the model reads these as `isError` tool results), or why
 * `McpServers` could not be set up (`INVALID_ARGUMENT`).
 */
export type McpErrorCode =
  /** The server reported the call as failed (`isError: true` in its result). */
  | "TOOL_FAILED"
  /** The call took longer than the server's `tool_timeout_ms`. */
  | "TOOL_TIMEOUT"
  /** The turn was stopped (its abort signal fired) while the call ran. */
  | "ABORTED"
  /** The server is not running: it did not start, crashed, or broke the protocol. */
  | "SERVER_UNAVAILABLE"
  /** The server answered something that is not a tool result. */
  | "MALFORMED_RESULT"
  /** A frozen tool the server no longer lists. */
  | "TOOL_VANISHED"
  | "INVALID_ARGUMENT";

/** Options of an {@link McpError} beyond its code and detail. */
export interface McpErrorOptions extends InsomniaErrorOptions {
  /** The server the error is about. */
  server?: string | undefined;
  /** The full tool name (`mcp__<server>__<tool>`), when it is about a call. */
  tool?: string | undefined;
}

/** The one error class of @insomnia/mcp. */
export class McpError extends InsomniaError<McpErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.mcp.error");
  override readonly name = "McpError";
  declare readonly server?: string;
  declare readonly tool?: string;

  constructor(code: McpErrorCode, detail: string, options: McpErrorOptions = {}) {
    const { server, tool, ...base } = options;
    super(code, detail, base);
    if (server !== undefined) this.server = server;
    if (tool !== undefined) this.tool = tool;
  }

  /** True for an McpError from any installed copy of this package. */
  static is(value: unknown): value is McpError {
    return hasBrand(value, McpError.brand);
  }
}
