import { hasBrand, InsomniaError } from "@insomnia/errors";

/** Every way resolving or loading a prompt reference can fail. */
export type PromptLoaderErrorCode =
  | "INVALID_REF"
  | "UNKNOWN_PREFIX"
  | "UNQUALIFIED_WITHOUT_CURRENT"
  | "PREFIX_NOT_CONFIGURED"
  | "NOT_FOUND"
  | "PATH_ESCAPE"
  | "NOT_A_FILE"
  | "TOO_LARGE"
  | "BAD_ENCODING"
  | "READ_FAILED";

/** Location details attached to a PromptLoaderError. */
export interface PromptLoaderErrorOptions {
  /** The reference as written. */
  ref?: string | undefined;
  /** The absolute path looked at. */
  file?: string | undefined;
  /** Offset in `ref` of the first bad character (INVALID_REF, UNKNOWN_PREFIX). */
  index?: number | undefined;
  /** Offset in the file of the first byte that is not UTF-8 (BAD_ENCODING). */
  byteOffset?: number | undefined;
  cause?: unknown;
}

/**
 * A reference that cannot be parsed is what the problem is about, not where it is: its text
 * stays in `ref`, while the message quotes it shortened (it may be long or hold control characters).
 */
const REFERENCE_SYNTAX_CODES: ReadonlySet<PromptLoaderErrorCode> = new Set([
  "INVALID_REF",
  "UNKNOWN_PREFIX",
  "UNQUALIFIED_WITHOUT_CURRENT",
]);

/** The one error class of @insomnia/prompt-loader; check `code`, never the message. */
export class PromptLoaderError extends InsomniaError<PromptLoaderErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.prompt-loader.error");
  override readonly name = "PromptLoaderError";
  declare readonly index?: number;
  declare readonly byteOffset?: number;

  constructor(code: PromptLoaderErrorCode, detail: string, options: PromptLoaderErrorOptions = {}) {
    const located = !REFERENCE_SYNTAX_CODES.has(code);
    super(code, detail, { ref: located ? options.ref : undefined, file: options.file, cause: options.cause });
    if (!located && options.ref !== undefined) (this as { ref?: string }).ref = options.ref;
    if (options.index !== undefined) this.index = options.index;
    if (options.byteOffset !== undefined) this.byteOffset = options.byteOffset;
  }

  /** True for a PromptLoaderError from any installed copy of this package. */
  static is(value: unknown): value is PromptLoaderError {
    return hasBrand(value, PromptLoaderError.brand);
  }
}
