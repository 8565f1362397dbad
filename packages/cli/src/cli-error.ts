import { hasBrand, InsomniaError } from "@insomnia/errors";

/** Machine-readable reason of a {@link CliError}. */
export type CliErrorCode = "USAGE" | "FILE_EXISTS" | "BAD_CWD";

/** Exit status of a CLI failure: 1 for a problem in the user's files, 2 for wrong usage. */
export type CliErrorKind = "user" | "usage";

/** Extra fields of a {@link CliError}. */
export interface CliErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** The file the problem is about. */
  file?: string | undefined;
}

/** The one error class of @insomnia/cli: wrong usage, or a refusal such as overwriting a file. */
export class CliError extends InsomniaError<CliErrorCode> {
  static readonly brand = Symbol.for("insomnia.cli.error");
  override readonly name = "CliError";

  constructor(code: CliErrorCode, detail: string, options: CliErrorOptions = {}) {
    super(code, detail, { file: options.file, cause: options.cause });
  }

  /** Whether the user typed the command wrong (exit 2) or their files are the problem (exit 1). */
  get kind(): CliErrorKind {
    return this.code === "FILE_EXISTS" ? "user" : "usage";
  }

  /** True for a CliError from any installed copy of this package. */
  static is(value: unknown): value is CliError {
    return hasBrand(value, CliError.brand);
  }
}
