import type { Scope } from "@insomnia/scope";
import type { Tool } from "@insomnia/worker";
import { FsToolsError } from "./fs-tools-error.ts";
import type { FsToolsLimits } from "./limits.ts";
import { type CallContext, locate, release } from "./locate.ts";
import { absoluteInput, requirePermission, shown } from "./scope-check.ts";
import { decodeText, readChecked } from "./text-file.ts";
import { checkInput } from "./tool-input.ts";

interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

/** `read_file { path, offset?, limit? }`: numbered lines of a UTF-8 text file inside the scope. */
export function readFileTool(scope: Scope, limits: FsToolsLimits): Tool {
  return {
    name: "read_file",
    description: `Reads a UTF-8 text file and returns its lines numbered from 1 ("     1\\tfirst line"). \`path\` is absolute or relative to the working directory. \`offset\` is the first line to show (default 1), \`limit\` how many lines (default ${limits.defaultLineLimit}). Long output is cut with a note that says how to read on. Only paths the working boundaries make readable can be read; binary files are refused.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File to read: absolute, or relative to the working directory." },
        offset: { type: "integer", minimum: 1, description: "First line to return, counting from 1." },
        limit: { type: "integer", minimum: 1, description: "Most lines to return." },
      },
      required: ["path"],
      additionalProperties: false,
    },
    execute: (raw: unknown) => {
      const input = checkInput<ReadFileInput>("read_file", raw, {
        path: { type: "path", required: true },
        offset: { type: "positive integer", required: false },
        limit: { type: "positive integer", required: false },
      });
      const ctx: CallContext = { scope, tool: "read_file", asked: input.path };
      const canonical = requirePermission(scope, ctx.tool, ctx.asked, absoluteInput(scope, input.path), "read");
      const located = locate(ctx, canonical, "read", false);
      try {
        const file = readChecked(ctx, located, limits.maxFileBytes);
        if (file === undefined) {
          throw new FsToolsError("NOT_FOUND", `read_file: there is no file at ${shown(ctx.asked, located.path)}`, {
            tool: ctx.tool,
            path: located.path,
          });
        }
        const text = decodeText(ctx, located.path, file.bytes, file.cut);
        return formatLines(text, located.path, input.offset ?? 1, input.limit ?? limits.defaultLineLimit, limits, file);
      } finally {
        release(located);
      }
    },
  };
}

/** `cat -n` style lines from `offset`, cut at `limit` lines, `maxOutputBytes` and `maxLineLength`, with notes. */
function formatLines(
  text: string,
  at: string,
  offset: number,
  limit: number,
  limits: FsToolsLimits,
  file: { size: number; cut: boolean; bytes: Buffer },
): string {
  if (text === "") return file.cut ? `[${at}: the first ${file.bytes.length} bytes hold no text]` : `[${at} is empty]`;
  // A file cut at the byte cap ends inside a line: that partial line is left out.
  const end = file.cut ? text.lastIndexOf("\n") + 1 : text.length;
  let pos = 0;
  let line = 1;
  while (line < offset && pos < end) {
    const nl = text.indexOf("\n", pos);
    pos = nl === -1 || nl >= end ? end : nl + 1;
    line += 1;
  }
  if (pos >= end) {
    const count = line - 1;
    return `[${at} has ${count} line${count === 1 ? "" : "s"}${file.cut ? " in its first readable part" : ""}; offset ${offset} is past the end]`;
  }
  const parts: string[] = [];
  let bytes = 0;
  let emitted = 0;
  let stop: string | undefined;
  while (pos < end) {
    if (emitted === limit) {
      stop = `[truncated: showed lines ${offset}-${line - 1}; more lines follow: call read_file with offset ${line}]`;
      break;
    }
    const nl = text.indexOf("\n", pos);
    const next = nl === -1 || nl >= end ? end : nl + 1;
    let content = text.slice(pos, nl === -1 || nl >= end ? end : nl);
    if (content.length > limits.maxLineLength) {
      content = `${content.slice(0, limits.maxLineLength)}… [line truncated: ${content.length - limits.maxLineLength} more characters]`;
    }
    const formatted = `${String(line).padStart(6)}\t${content}\n`;
    bytes += Buffer.byteLength(formatted);
    if (bytes > limits.maxOutputBytes && emitted > 0) {
      stop = `[truncated: output limit of ${limits.maxOutputBytes} bytes reached after line ${line - 1}; call read_file with offset ${line} to read on]`;
      break;
    }
    parts.push(formatted);
    emitted += 1;
    line += 1;
    pos = next;
  }
  if (stop === undefined && file.cut) {
    stop = `[truncated: ${at} is ${file.size} bytes; read_file reads only its first ${file.bytes.length} bytes]`;
  }
  return stop === undefined ? parts.join("") : `${parts.join("")}${stop}`;
}
