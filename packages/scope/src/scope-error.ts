import { type ErrorLocation, hasBrand, InsomniaError } from "@insomnia/errors";

/** Machine-readable reason of a {@link ScopeError}. */
export type ScopeErrorCode = "INVALID_BASE" | "NO_ALLOW_RULE" | "INVALID_RULE" | "INVALID_PATH" | "SYMLINK_LOOP";

/** Extra fields of a {@link ScopeError}; the location is where the caller wrote the setting (see `ScopeOptions.locate`). */
export interface ScopeErrorOptions extends ErrorLocation {
  /** The underlying error, if any. */
  cause?: unknown;
  /** Where in the config the problem is, e.g. `scope.allow[2]`. */
  rule?: string | undefined;
  /** The path being resolved when the problem happened. */
  path?: string | undefined;
}

/**
 * The one error class of @insomnia/scope. A scope has no file of its own: `rule` and `path` say
 * what the problem is about, and `file`/`line`/`column` where the caller wrote it, when it said.
 */
export class ScopeError extends InsomniaError<ScopeErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.scope.error");
  override readonly name = "ScopeError";
  /** Config location of the offending rule, e.g. `scope.allow[2]`. */
  declare readonly rule?: string;
  /** The path that could not be used. */
  declare readonly path?: string;

  constructor(code: ScopeErrorCode, detail: string, options: ScopeErrorOptions = {}) {
    super(code, detail, { cause: options.cause, file: options.file, line: options.line, column: options.column });
    if (options.rule !== undefined) this.rule = options.rule;
    if (options.path !== undefined) this.path = options.path;
  }

  /** True for a ScopeError from any installed copy of this package. */
  static is(value: unknown): value is ScopeError {
    return hasBrand(value, ScopeError.brand);
  }
}
