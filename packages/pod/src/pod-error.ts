const BRAND = Symbol.for("insomnia.pod.error");

/** Machine-readable reason of a {@link PodError}. */
export type PodErrorCode =
  | "INVALID_SYSTEM_PROMPT_TEMPLATE"
  | "SYSTEM_PROMPT_RENDER"
  | "INVALID_SCOPE"
  | "WORKER_IN_USE"
  | "NOT_MATERIALIZED"
  | "POD_CLOSED"
  | "INVALID_ARGUMENT";

/** Extra fields of a {@link PodError}. */
export interface PodErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** The file the problem is in (a segment log, a lock file, a template). */
  file?: string;
  /** 1-based line in `file` (for a segment log: the record's line). */
  line?: number;
  /** 1-based column in `file` (template errors). */
  column?: number;
  /** The prompt reference the problem is in, e.g. `$workspace/main` (template errors). */
  ref?: string;
}

/** The one error class of @insomnia/pod. */
export class PodError extends Error {
  override readonly name = "PodError";
  /** What went wrong. */
  readonly code: PodErrorCode;
  /** The file the problem is in. */
  readonly file?: string;
  /** 1-based line in `file`. */
  readonly line?: number;
  /** 1-based column in `file`. */
  readonly column?: number;
  /** The prompt reference the problem is in. */
  readonly ref?: string;
  readonly [BRAND] = true;

  constructor(code: PodErrorCode, message: string, options: PodErrorOptions = {}) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.code = code;
    if (options.file !== undefined) this.file = options.file;
    if (options.line !== undefined) this.line = options.line;
    if (options.column !== undefined) this.column = options.column;
    if (options.ref !== undefined) this.ref = options.ref;
  }

  /** True for a PodError from any installed copy of this package. */
  static is(value: unknown): value is PodError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
