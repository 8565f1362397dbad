import type { Tool, ToolExecuteOptions } from "@insomnia/worker";
import { FsToolsError } from "./fs-tools-error.ts";

/** A file tool: a worker `Tool` whose options may be left out when it is called directly. */
export interface FsTool extends Tool {
  execute(input: unknown, options?: ToolExecuteOptions): Promise<string> | string;
}

/** Throws `ABORTED` when the turn was cancelled, so a file tool starts or commits nothing after that. */
export function stopIfAborted(tool: string, signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted !== true) return;
  throw new FsToolsError("ABORTED", `${tool} was interrupted; ${what}`, { tool, cause: signal.reason });
}
