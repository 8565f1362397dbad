import type { Scope } from "@insomnia/scope";
import type { ToolExecuteOptions } from "@insomnia/worker";
import { type FsTool, stopIfAborted } from "./fs-tool.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import type { FsToolsLimits } from "./limits.ts";
import { type CallContext, locate, release } from "./locate.ts";
import { absoluteInput, requirePermission, shown } from "./scope-check.ts";
import { completeUtf8Length } from "@insomnia/safe-read";
import { readChecked, textBytes, utf8Text } from "./text-file.ts";
import { checkInput } from "./tool-input.ts";

interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

/** `read_file { path, offset?, limit? }`: numbered lines of a UTF-8 text file inside the scope. */
export function readFileTool(scope: Scope, limits: FsToolsLimits): FsTool {
  return {
    name: "read_file",
    description: `Reads a UTF-8 text file and returns its text exactly as it is in the file (no line numbers, so it can be copied into edit_file). \`path\` is absolute or relative to the working directory. \`offset\` is the first line to return, counting from 1 (default 1), \`limit\` how many lines (default ${limits.defaultLineLimit}). When something is left out, a note in square brackets after the text says what and how to read on. Only paths the working boundaries make readable can be read; binary files are refused.`,
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
    execute: (raw: unknown, options?: ToolExecuteOptions) => {
      stopIfAborted("read_file", options?.signal, "nothing was read");
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
        const text = textBytes(ctx, located.path, file.bytes, file.cut);
        return selectLines(text, located.path, input.offset ?? 1, input.limit ?? limits.defaultLineLimit, limits, file);
      } finally {
        release(located);
      }
    },
  };
}

const NEWLINE = 0x0a;

/** Where the `count`-th newline after `from` ends (the start of the next line), or -1 when there are fewer before `end`. */
function afterLines(bytes: Buffer, from: number, count: number, end: number): number {
  let pos = from;
  for (let n = 0; n < count; n += 1) {
    const nl = bytes.indexOf(NEWLINE, pos);
    if (nl === -1 || nl >= end) return -1;
    pos = nl + 1;
  }
  return pos;
}

/** Lines in `bytes[from, to)`: newlines, plus one for a last line without its newline. */
function countLines(bytes: Buffer, from: number, to: number): number {
  let lines = 0;
  for (let nl = bytes.indexOf(NEWLINE, from); nl !== -1 && nl < to; nl = bytes.indexOf(NEWLINE, nl + 1)) lines += 1;
  return to > from && bytes[to - 1] !== NEWLINE ? lines + 1 : lines;
}

/**
 * The text of lines `offset` … `offset + limit - 1`, exactly as in the file, cut at
 * `maxOutputBytes` on a line boundary, with a note in brackets after it whenever something
 * was left out. A whole file that fits is one slice and one decode: no per-line work.
 */
function selectLines(
  bytes: Buffer,
  at: string,
  offset: number,
  limit: number,
  limits: FsToolsLimits,
  file: { size: number; cut: boolean; bytes: Buffer },
): string {
  if (bytes.length === 0)
    return file.cut ? `[${at}: the first ${file.bytes.length} bytes hold no text]` : `[${at} is empty]`;
  // A file cut at the byte cap ends inside a line: that partial line is left out.
  const end = file.cut ? bytes.lastIndexOf(NEWLINE) + 1 : bytes.length;
  const start = offset === 1 ? 0 : afterLines(bytes, 0, offset - 1, end);
  if (start === -1 || start >= end) {
    const count = countLines(bytes, 0, end);
    return `[${at} has ${count} line${count === 1 ? "" : "s"}${file.cut ? " in its first readable part" : ""}; offset ${offset} is past the end]`;
  }
  let stop = Math.min(end, start + limits.maxOutputBytes);
  let byLimit = false;
  // More lines than bytes is impossible, so a limit that large needs no counting.
  if (limit <= stop - start) {
    const afterLimit = afterLines(bytes, start, limit, stop);
    if (afterLimit !== -1 && afterLimit < end) {
      stop = afterLimit;
      byLimit = true;
    }
  }
  let note: string | undefined;
  if (byLimit) {
    note = `[truncated: showed lines ${offset}-${offset + limit - 1}; more lines follow: call read_file with offset ${offset + limit}]`;
  } else if (stop < end) {
    const lineEnd = bytes.lastIndexOf(NEWLINE, stop - 1) + 1;
    if (lineEnd > start) {
      stop = lineEnd;
      const last = offset + countLines(bytes, start, stop) - 1;
      note = `[truncated: output limit of ${limits.maxOutputBytes} bytes reached after line ${last}; call read_file with offset ${last + 1} to read on]`;
    } else {
      stop = start + completeUtf8Length(bytes.subarray(start, stop));
      note = `[truncated: line ${offset} is longer than the output limit of ${limits.maxOutputBytes} bytes; only its start is shown]`;
    }
  } else if (file.cut) {
    note = `[truncated: ${at} is ${file.size} bytes; read_file reads only its first ${file.bytes.length} bytes]`;
  }
  const text = utf8Text(bytes.subarray(start, stop));
  if (note === undefined) return text;
  return `${text}${text.endsWith("\n") ? "" : "\n"}${note}`;
}
