import type { Scope } from "@insomnia/scope";
import type { ToolExecuteOptions } from "@insomnia/worker";
import { atomicWrite } from "./atomic-write.ts";
import { type FsTool, stopIfAborted } from "./fs-tool.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import type { FsToolsLimits } from "./limits.ts";
import { type CallContext, locate, release } from "./locate.ts";
import { absoluteInput, requirePermission, shown } from "./scope-check.ts";
import { decodeText, readChecked } from "./text-file.ts";
import { checkInput } from "./tool-input.ts";

interface EditFileInput {
  path: string;
  old_string: string;
  new_string: string;
}

/** Line numbers (1-based) shown for a non-unique old_string, at most this many. */
const MAX_LINES_SHOWN = 10;

/** `edit_file { path, old_string, new_string }`: replaces one exact, unique occurrence in a file inside the writable scope. */
export function editFileTool(scope: Scope, limits: FsToolsLimits): FsTool {
  return {
    name: "edit_file",
    description:
      "Replaces exactly one occurrence of `old_string` in a UTF-8 text file with `new_string` and writes the file back atomically. `old_string` must match the file byte for byte (whitespace and indentation included; read_file shows the text exactly as it is) and occur exactly once: include enough surrounding lines to make it unique. `path` is absolute or relative to the working directory; only writable paths can be edited.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "File to edit: absolute, or relative to the working directory." },
        old_string: { type: "string", description: "The exact text to replace; it must occur exactly once." },
        new_string: { type: "string", description: "The text to put in its place." },
      },
      required: ["path", "old_string", "new_string"],
      additionalProperties: false,
    },
    execute: async (raw: unknown, options?: ToolExecuteOptions) => {
      stopIfAborted("edit_file", options?.signal, "nothing was changed");
      const input = checkInput<EditFileInput>("edit_file", raw, {
        path: { type: "path", required: true },
        old_string: { type: "non-empty string", required: true },
        new_string: { type: "string", required: true },
      });
      const ctx: CallContext = { scope, tool: "edit_file", asked: input.path };
      if (input.old_string === input.new_string) {
        throw new FsToolsError(
          "INVALID_INPUT",
          "edit_file: old_string and new_string are the same, so there is nothing to change; nothing was written",
          { tool: ctx.tool },
        );
      }
      const canonical = requirePermission(scope, ctx.tool, ctx.asked, absoluteInput(scope, input.path), "write");
      const located = locate(ctx, canonical, "write", false);
      try {
        const where = shown(ctx.asked, located.path);
        const file = readChecked(ctx, located, limits.maxFileBytes);
        if (file === undefined) {
          throw new FsToolsError("NOT_FOUND", `edit_file: there is no file at ${where}; use write_file to create it`, {
            tool: ctx.tool,
            path: located.path,
          });
        }
        if (file.cut) {
          throw new FsToolsError(
            "TOO_LARGE",
            `edit_file refused ${where}: it is ${file.size} bytes, over the limit of ${limits.maxFileBytes}; nothing was written`,
            { tool: ctx.tool, path: located.path },
          );
        }
        const text = decodeText(ctx, located.path, file.bytes, false);
        const first = text.indexOf(input.old_string);
        if (first === -1) {
          throw new FsToolsError(
            "NO_MATCH",
            `edit_file: old_string was not found in ${where} (it must match exactly, whitespace included; read the file again and copy the text); nothing was written`,
            { tool: ctx.tool, path: located.path },
          );
        }
        const lines = occurrenceLines(text, input.old_string, first);
        if (lines.length > 1) {
          const listed = lines.slice(0, MAX_LINES_SHOWN).join(", ");
          throw new FsToolsError(
            "NOT_UNIQUE",
            `edit_file: old_string occurs ${lines.length} times in ${where} (at lines ${listed}${lines.length > MAX_LINES_SHOWN ? ", …" : ""}); include more surrounding text so it occurs exactly once; nothing was written`,
            { tool: ctx.tool, path: located.path },
          );
        }
        const updated = Buffer.from(
          text.slice(0, first) + input.new_string + text.slice(first + input.old_string.length),
          "utf8",
        );
        if (updated.length > limits.maxWriteBytes) {
          throw new FsToolsError(
            "TOO_LARGE",
            `edit_file refused ${where}: the edited file would be ${updated.length} bytes, over the limit of ${limits.maxWriteBytes}; nothing was written`,
            { tool: ctx.tool, path: located.path },
          );
        }
        await atomicWrite(ctx, located, updated, options?.signal);
        return `Edited ${located.path}: replaced 1 occurrence at line ${lines[0]} (${file.size} → ${updated.length} bytes).`;
      } finally {
        release(located);
      }
    },
  };
}

/** 1-based line numbers of every occurrence (overlapping ones too: "aa" is twice in "aaa") of `needle`, starting with the one at `first`. */
function occurrenceLines(text: string, needle: string, first: number): number[] {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (let at = first; at !== -1; at = text.indexOf(needle, at + 1)) {
    for (let nl = text.indexOf("\n", scanned); nl !== -1 && nl < at; nl = text.indexOf("\n", nl + 1)) line += 1;
    scanned = at;
    lines.push(line);
  }
  return lines;
}
