import type { Scope } from "@insomnia/scope";
import type { ToolExecuteOptions } from "@insomnia/worker";
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { closeQuietly, dirPath, entryPath, errnoOf, kindOf, type OpenDir, openDir } from "./descriptor.ts";
import { type FsTool, stopIfAborted } from "./fs-tool.ts";
import type { FsToolsLimits } from "./limits.ts";
import { type CallContext, failure } from "./locate.ts";
import { absoluteInput, requireListable } from "./scope-check.ts";
import { checkInput } from "./tool-input.ts";

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `list_dir { path }`: the sorted entries of a directory inside the scope, each with its kind. */
export function listDirTool(scope: Scope, limits: FsToolsLimits): FsTool {
  return {
    name: "list_dir",
    description: `Lists a directory: one entry per line, sorted by name, each with its kind (file with its size in bytes, dir, symlink with its target, fifo, socket, device). \`path\` is absolute or relative to the working directory. At most ${limits.maxEntries} entries are shown. Only directories whose entries the working boundaries make readable can be listed.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Directory to list: absolute, or relative to the working directory." },
      },
      required: ["path"],
      additionalProperties: false,
    },
    execute: (raw: unknown, options?: ToolExecuteOptions) => {
      stopIfAborted("list_dir", options?.signal, "nothing was listed");
      const input = checkInput<{ path: string }>("list_dir", raw, { path: { type: "path", required: true } });
      const ctx: CallContext = { scope, tool: "list_dir", asked: input.path };
      const canonical = requireListable(scope, ctx.tool, ctx.asked, absoluteInput(scope, input.path));
      let dir: OpenDir;
      try {
        dir = openDir(canonical);
      } catch (error) {
        throw failure(ctx, canonical, error, errnoOf(error) === "ENOTDIR" ? "the path" : "the directory");
      }
      try {
        // Judged again where the descriptor really is: a swapped symlink on the way shows here.
        requireListable(scope, ctx.tool, ctx.asked, dir.real, true);
        return listing(dir, limits.maxEntries);
      } catch (error) {
        throw failure(ctx, dir.real, error, "the directory");
      } finally {
        closeQuietly(dir.fd);
      }
    },
  };
}

function listing(dir: OpenDir, maxEntries: number): string {
  const names = readdirSync(dirPath(dir)).sort(compareCodeUnits);
  const lines = [`${dir.real}: ${names.length} entr${names.length === 1 ? "y" : "ies"}`];
  for (const name of names.slice(0, maxEntries)) lines.push(describeEntry(dir, name));
  if (names.length > maxEntries) {
    lines.push(`[truncated: ${names.length - maxEntries} more entries not shown (the limit is ${maxEntries})]`);
  }
  return lines.join("\n");
}

function describeEntry(dir: OpenDir, name: string): string {
  const at = entryPath(dir, name);
  let kind: ReturnType<typeof kindOf>;
  let extra = "";
  try {
    const stats = lstatSync(at);
    kind = kindOf(stats);
    if (kind === "file") extra = ` (${stats.size} bytes)`;
    else if (kind === "dir") extra = "/";
    else if (kind === "symlink") extra = ` -> ${printable(readlinkSync(at))}`;
  } catch {
    return `gone    ${printable(name)} (removed while listing)`;
  }
  return `${kind.padEnd(7)} ${printable(name)}${extra}`;
}

/** A name with a control character (a newline could fake a line of the listing) is shown quoted. */
function printable(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  return /[\u0000-\u001f\u007f]/.test(name) ? JSON.stringify(name) : name;
}
