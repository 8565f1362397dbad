import { hasBrand, InsomniaError } from "@insomnia/errors";

/** Every way the worker can fail, as a string-literal union. */
export type WorkerErrorCode =
  | "NO_SYSTEM_PROMPT"
  | "MAX_ITERATIONS"
  | "UNKNOWN_TOOL"
  | "CLIENT_FAILED"
  | "TOOL_FACTORY_FAILED"
  | "DUPLICATE_TOOL"
  | "INVALID_ARGUMENT"
  | "BUSY"
  | "ABORTED";

/** Options of a WorkerError beyond its code and message. */
export interface WorkerErrorOptions {
  cause?: unknown;
  /** The tool the error is about, where there is one. */
  tool?: string | undefined;
}

/** The one error class of @insomnia/worker. */
export class WorkerError extends InsomniaError<WorkerErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.worker.error");
  override readonly name = "WorkerError";
  /** The tool the error is about, where there is one. */
  declare readonly tool?: string;

  constructor(code: WorkerErrorCode, detail: string, options: WorkerErrorOptions = {}) {
    super(code, detail, { cause: options.cause });
    if (options.tool !== undefined) this.tool = options.tool;
  }

  /** True for a WorkerError, also one thrown by another installed copy of this package. */
  static is(value: unknown): value is WorkerError {
    return hasBrand(value, WorkerError.brand);
  }
}
