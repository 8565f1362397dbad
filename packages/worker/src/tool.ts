import type { ImagePart } from "./content-parts.ts";

/** What the model is told about a tool. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** What a tool may return instead of a plain string: its text plus images (png, jpeg, gif, webp; 5 MiB each at most). */
export interface ToolOutput {
  readonly content: string;
  readonly images?: readonly ImagePart[] | undefined;
}

/** What the worker passes to a tool's execute besides its input. */
export interface ToolExecuteOptions {
  /** Aborted when the turn is cancelled; a tool stops its work and may throw. */
  readonly signal: AbortSignal;
}

/** A tool the worker can run: its definition plus the code behind it. */
export interface Tool extends ToolDefinition {
  /**
   * Runs the tool; the returned string (or text with images) is sent back to the model.
   * Throwing reports an error to the model. `options.signal` aborts when the turn is cancelled.
   */
  execute(input: unknown, options: ToolExecuteOptions): Promise<string | ToolOutput> | string | ToolOutput;
}

/**
 * Builds a tool, or a list of tools (e.g. every tool of an MCP server), on demand; run at
 * most once, by ToolServer.flushPending().
 */
export type ToolFactory = () => Tool | readonly Tool[] | Promise<Tool | readonly Tool[]>;
