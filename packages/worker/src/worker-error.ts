const brand = Symbol.for("insomnia.worker.error");

/** Every way the worker can fail, as a string-literal union. */
export type WorkerErrorCode =
  | "NO_SYSTEM_PROMPT"
  | "MAX_ITERATIONS"
  | "UNKNOWN_TOOL"
  | "CLIENT_FAILED"
  | "TOOL_FACTORY_FAILED"
  | "DUPLICATE_TOOL"
  | "INVALID_ARGUMENT"
  | "BUSY";

/** Options of a WorkerError beyond its code and message. */
export interface WorkerErrorOptions {
  cause?: unknown;
  /** The tool the error is about, where there is one. */
  tool?: string;
}

/** The one error class of @insomnia/worker. */
export class WorkerError extends Error {
  override readonly name = "WorkerError";
  readonly code: WorkerErrorCode;
  /** The tool the error is about, where there is one. */
  declare readonly tool?: string;

  constructor(code: WorkerErrorCode, message: string, options: WorkerErrorOptions = {}) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    this.code = code;
    Object.defineProperty(this, brand, { value: true });
    if (options.tool !== undefined) this.tool = options.tool;
  }

  /** True for a WorkerError, also one thrown by another installed copy of this package. */
  static is(value: unknown): value is WorkerError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
