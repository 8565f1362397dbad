/** What the model is told about a tool. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** A tool the worker can run: its definition plus the code behind it. */
export interface Tool extends ToolDefinition {
  /** Runs the tool; the returned string is sent back to the model. Throwing reports an error to the model. */
  execute(input: unknown): Promise<string> | string;
}

/**
 * Builds a tool, or a list of tools (e.g. every tool of an MCP server), on demand; run at
 * most once, by ToolServer.flushPending().
 */
export type ToolFactory = () => Tool | readonly Tool[] | Promise<Tool | readonly Tool[]>;
