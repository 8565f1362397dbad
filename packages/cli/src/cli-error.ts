import { hasBrand, InsomniaError } from "@insomnia/errors";

/** Machine-readable reason of a {@link CliError}. */
export type CliErrorCode =
  | "USAGE"
  | "FILE_EXISTS"
  | "BAD_CWD"
  /** `pod run` without a provider block, or with a kind it does not know. */
  | "NO_PROVIDER"
  /** No API key where the provider needs one (nothing is sent). */
  | "NO_API_KEY"
  /** `provider.api_key_file` cannot be read. */
  | "API_KEY_UNREADABLE"
  /** An untrusted workspace layer widens what the pod can do, e.g. a key file outside the workspace (nothing is read or sent). */
  | "UNTRUSTED_WORKSPACE"
  /** `pod trust` in a directory without a workspace layer to trust. */
  | "NO_WORKSPACE_LAYER"
  /** `pod resume` or `pod log` with no conversation in the store. */
  | "NO_CONVERSATION"
  /** `pod log <id>` or `--conversation <id>` naming no conversation of the pod. */
  | "UNKNOWN_CONVERSATION"
  /** `pod run --image FILE` names a file that is unreadable, not png/jpeg/gif/webp, or over 5 MiB (nothing is sent). */
  | "INVALID_IMAGE";

const USER_CODES: ReadonlySet<CliErrorCode> = new Set([
  "FILE_EXISTS",
  "NO_PROVIDER",
  "NO_API_KEY",
  "API_KEY_UNREADABLE",
  "UNTRUSTED_WORKSPACE",
  "NO_WORKSPACE_LAYER",
  "NO_CONVERSATION",
  "UNKNOWN_CONVERSATION",
]);

/** Exit status of a CLI failure: 1 for a problem in the user's files, 2 for wrong usage. */
export type CliErrorKind = "user" | "usage";

/** Extra fields of a {@link CliError}. */
export interface CliErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** The file the problem is about. */
  file?: string | undefined;
  /** 1-based line in `file`. */
  line?: number | undefined;
  /** 1-based column in `file`. */
  column?: number | undefined;
}

/** The one error class of @insomnia/cli: wrong usage, or a refusal such as overwriting a file. */
export class CliError extends InsomniaError<CliErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.cli.error");
  override readonly name = "CliError";

  constructor(code: CliErrorCode, detail: string, options: CliErrorOptions = {}) {
    super(code, detail, { file: options.file, line: options.line, column: options.column, cause: options.cause });
  }

  /** Whether the user typed the command wrong (exit 2) or their files are the problem (exit 1). */
  get kind(): CliErrorKind {
    return USER_CODES.has(this.code) ? "user" : "usage";
  }

  /** True for a CliError from any installed copy of this package. */
  static is(value: unknown): value is CliError {
    return hasBrand(value, CliError.brand);
  }
}
