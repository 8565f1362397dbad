import type { Scope } from "@insomnia/scope";
import type { ToolExecuteOptions } from "@insomnia/worker";
import { atomicWrite } from "./atomic-write.ts";
import { type FsTool, stopIfAborted } from "./fs-tool.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import type { FsToolsLimits } from "./limits.ts";
import { abandon, type CallContext, locate, release } from "./locate.ts";
import { absoluteInput, requirePermission } from "./scope-check.ts";
import { checkInput } from "./tool-input.ts";

/** `write_file { path, content }`: writes a whole file inside the writable scope, atomically. */
export function writeFileTool(scope: Scope, limits: FsToolsLimits): FsTool {
  return {
    name: "write_file",
    description: `Writes \`content\` as the whole new content of a file (UTF-8), creating the file and any missing directories, or replacing the file. The write is atomic: readers see the old file or the new one, never a mix. \`path\` is absolute or relative to the working directory. Only paths the working boundaries make writable can be written; at most ${limits.maxWriteBytes} bytes. To change part of a file, use edit_file.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File to write: absolute, or relative to the working directory." },
        content: { type: "string", description: "The complete new content of the file." },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    execute: async (raw: unknown, options?: ToolExecuteOptions) => {
      stopIfAborted("write_file", options?.signal, "nothing was written");
      const input = checkInput<{ path: string; content: string }>("write_file", raw, {
        path: { type: "path", required: true },
        content: { type: "string", required: true },
      });
      const ctx: CallContext = { scope, tool: "write_file", asked: input.path };
      const bytes = Buffer.from(input.content, "utf8");
      if (bytes.length > limits.maxWriteBytes) {
        throw new FsToolsError(
          "TOO_LARGE",
          `write_file refused ${input.path}: the content is ${bytes.length} bytes, over the limit of ${limits.maxWriteBytes}; nothing was written`,
          { tool: ctx.tool },
        );
      }
      const canonical = requirePermission(scope, ctx.tool, ctx.asked, absoluteInput(scope, input.path), "write");
      const located = locate(ctx, canonical, "write", true);
      let done = false;
      try {
        const { replacedBytes } = await atomicWrite(ctx, located, bytes, options?.signal);
        done = true;
        return replacedBytes === undefined
          ? `Wrote ${bytes.length} bytes to ${located.path} (new file).`
          : `Wrote ${bytes.length} bytes to ${located.path} (replaced ${replacedBytes} bytes).`;
      } finally {
        if (done) release(located);
        else abandon(located);
      }
    },
  };
}
