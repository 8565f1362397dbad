import { hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";

/**
 * Why a file tool call was refused (the model reads these as `isError` tool results), or
 * why `fsTools()` itself could not be set up (`INVALID_OPTIONS`, `UNKNOWN_TOOL`).
 */
export type FsToolsErrorCode =
  | "INVALID_INPUT"
  | "OUTSIDE_SCOPE"
  | "READ_ONLY"
  | "NOT_FOUND"
  | "NOT_A_FILE"
  | "NOT_A_DIRECTORY"
  | "NOT_TEXT"
  | "TOO_LARGE"
  | "NO_MATCH"
  | "NOT_UNIQUE"
  | "CHANGED"
  | "IO_ERROR"
  | "ABORTED"
  | "INVALID_OPTIONS"
  | "UNKNOWN_TOOL";

/** Options of an {@link FsToolsError} beyond its code and detail. */
export interface FsToolsErrorOptions extends InsomniaErrorOptions {
  /** The tool that refused, e.g. `read_file`. */
  tool?: string | undefined;
  /** The absolute path the refusal is about (resolved, symlinks followed where known). */
  path?: string | undefined;
  /** The scope rule that decided, e.g. `scope.deny[0]`. */
  rule?: string | undefined;
}

/** The one error class of @insomnia/fs-tools. */
export class FsToolsError extends InsomniaError<FsToolsErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.fs-tools.error");
  override readonly name = "FsToolsError";
  declare readonly tool?: string;
  declare readonly path?: string;
  declare readonly rule?: string;

  constructor(code: FsToolsErrorCode, detail: string, options: FsToolsErrorOptions = {}) {
    const { tool, path, rule, ...base } = options;
    super(code, detail, base);
    if (tool !== undefined) this.tool = tool;
    if (path !== undefined) this.path = path;
    if (rule !== undefined) this.rule = rule;
  }

  /** True for an FsToolsError from any installed copy of this package. */
  static is(value: unknown): value is FsToolsError {
    return hasBrand(value, FsToolsError.brand);
  }
}
