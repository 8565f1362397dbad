import { didYouMeanSuffix } from "@insomnia/errors";
import { Scope } from "@insomnia/scope";
import { editFileTool } from "./edit-file.ts";
import type { FsTool } from "./fs-tool.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import { DEFAULT_LIMITS, type FsToolsLimits } from "./limits.ts";
import { listDirTool } from "./list-dir.ts";
import { readFileTool } from "./read-file.ts";
import { FS_TOOL_NAMES, type FsToolName } from "./tool-names.ts";
import { writeFileTool } from "./write-file.ts";

/** Options of {@link fsTools}: which tools, and any limit to change. */
export interface FsToolsOptions extends Partial<FsToolsLimits> {
  /** Names of the tools to build (a manifest's `worker.tools`); default: all of {@link FS_TOOL_NAMES}. `[]` builds none. */
  tools?: readonly string[] | undefined;
}

const BUILDERS: Record<FsToolName, (scope: Scope, limits: FsToolsLimits) => FsTool> = {
  edit_file: editFileTool,
  list_dir: listDirTool,
  read_file: readFileTool,
  write_file: writeFileTool,
};

/**
 * The file tools for a worker, each enforcing `scope` on every call; sorted by name. Throws
 * FsToolsError (`UNKNOWN_TOOL`, `INVALID_OPTIONS`) for options it cannot use.
 */
export function fsTools(scope: Scope, options: FsToolsOptions = {}): FsTool[] {
  if (!(scope instanceof Scope) && typeof (scope as Partial<Scope> | null)?.explain !== "function") {
    throw new FsToolsError("INVALID_OPTIONS", "fsTools needs a Scope (from Scope.fromConfig) as its first argument");
  }
  const limits = checkLimits(options);
  return pickFsTools(options.tools ?? FS_TOOL_NAMES).map((name) => BUILDERS[name](scope, limits));
}

/**
 * The tool names `names` selects, checked, without duplicates, sorted: what a pod registers
 * and what its template's `tools` variable lists. Throws UNKNOWN_TOOL with a did-you-mean.
 */
export function pickFsTools(names: readonly string[]): FsToolName[] {
  if (!Array.isArray(names)) throw new FsToolsError("INVALID_OPTIONS", "tools must be a list of tool names");
  const picked = new Set<FsToolName>();
  for (const name of names) {
    if (typeof name !== "string" || !(FS_TOOL_NAMES as readonly string[]).includes(name)) {
      throw new FsToolsError(
        "UNKNOWN_TOOL",
        `unknown file tool ${JSON.stringify(name)}${typeof name === "string" ? didYouMeanSuffix(name, FS_TOOL_NAMES) : ""}; the file tools are ${FS_TOOL_NAMES.join(", ")}`,
      );
    }
    picked.add(name as FsToolName);
  }
  return FS_TOOL_NAMES.filter((name) => picked.has(name));
}

function checkLimits(options: FsToolsOptions): FsToolsLimits {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof FsToolsLimits)[]) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new FsToolsError(
        "INVALID_OPTIONS",
        `fsTools option ${key} must be a whole number of 1 or more, got ${String(value)}`,
      );
    }
    limits[key] = value;
  }
  return Object.freeze(limits) as unknown as FsToolsLimits;
}
