const CLI_ERROR_BRAND = Symbol.for("insomnia.cli.error");

/** Machine-readable reason of a {@link CliError}. */
export type CliErrorCode = "USAGE" | "FILE_EXISTS" | "BAD_CWD";

/** Exit status of a CLI failure: 1 for a problem in the user's files, 2 for wrong usage. */
export type CliErrorKind = "user" | "usage";

/** Extra fields of a {@link CliError}. */
export interface CliErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** The file the problem is about. */
  file?: string;
}

/** The one error class of @insomnia/cli: wrong usage, or a refusal such as overwriting a file. */
export class CliError extends Error {
  override readonly name = "CliError";
  /** What went wrong. */
  readonly code: CliErrorCode;
  /** The file the problem is about, when there is one. */
  readonly file?: string;
  readonly [CLI_ERROR_BRAND] = true;

  constructor(code: CliErrorCode, message: string, options: CliErrorOptions = {}) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.code = code;
    if (options.file !== undefined) this.file = options.file;
  }

  /** Whether the user typed the command wrong (exit 2) or their files are the problem (exit 1). */
  get kind(): CliErrorKind {
    return this.code === "FILE_EXISTS" ? "user" : "usage";
  }

  /** True for a CliError from any installed copy of this package. */
  static is(value: unknown): value is CliError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[CLI_ERROR_BRAND] === true;
  }
}
