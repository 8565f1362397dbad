const SCOPE_ERROR_BRAND = Symbol.for("insomnia.scope.error");

/** Machine-readable reason of a {@link ScopeError}. */
export type ScopeErrorCode = "INVALID_BASE" | "NO_ALLOW_RULE" | "INVALID_RULE" | "INVALID_PATH" | "SYMLINK_LOOP";

/** Extra fields of a {@link ScopeError}. */
export interface ScopeErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** Where in the config the problem is, e.g. `scope.allow[2]`. */
  rule?: string;
  /** The path being resolved when the problem happened. */
  path?: string;
}

/** The one error class of @insomnia/scope. */
export class ScopeError extends Error {
  override readonly name = "ScopeError";
  /** What went wrong. */
  readonly code: ScopeErrorCode;
  /** Config location of the offending rule, e.g. `scope.allow[2]`. */
  readonly rule?: string;
  /** The path that could not be used. */
  readonly path?: string;
  readonly [SCOPE_ERROR_BRAND] = true;

  constructor(code: ScopeErrorCode, message: string, options: ScopeErrorOptions = {}) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.code = code;
    if (options.rule !== undefined) this.rule = options.rule;
    if (options.path !== undefined) this.path = options.path;
  }

  /** True for a ScopeError from any installed copy of this package. */
  static is(value: unknown): value is ScopeError {
    return (
      typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[SCOPE_ERROR_BRAND] === true
    );
  }
}
