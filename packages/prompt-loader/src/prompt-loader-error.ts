const BRAND = Symbol.for("insomnia.prompt-loader.error");

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
export interface PromptLoaderErrorDetails {
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

/** The one error class of @insomnia/prompt-loader; check `code`, never the message. */
export class PromptLoaderError extends Error {
  override readonly name = "PromptLoaderError";
  readonly code: PromptLoaderErrorCode;
  readonly ref?: string;
  readonly file?: string;
  readonly index?: number;
  readonly byteOffset?: number;
  readonly [BRAND] = true;

  constructor(code: PromptLoaderErrorCode, message: string, details: PromptLoaderErrorDetails = {}) {
    super(message, "cause" in details ? { cause: details.cause } : undefined);
    this.code = code;
    if (details.ref !== undefined) this.ref = details.ref;
    if (details.file !== undefined) this.file = details.file;
    if (details.index !== undefined) this.index = details.index;
    if (details.byteOffset !== undefined) this.byteOffset = details.byteOffset;
  }

  /** True for a PromptLoaderError from any installed copy of this package. */
  static is(value: unknown): value is PromptLoaderError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
