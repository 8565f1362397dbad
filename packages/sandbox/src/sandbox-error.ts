import { hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";

/**
 * Why the sandbox cannot run commands here (`SANDBOX_UNAVAILABLE`), why it runs them without a
 * bound on their number of processes (`PROCESS_LIMIT_UNAVAILABLE`, a warning), why a
 * run_command call was refused (`INVALID_INPUT`) or stopped (`ABORTED`), or why the tool could
 * not be set up (`INVALID_OPTIONS`).
 */
export type SandboxErrorCode =
  | "SANDBOX_UNAVAILABLE"
  | "PROCESS_LIMIT_UNAVAILABLE"
  | "INVALID_INPUT"
  | "ABORTED"
  | "INVALID_OPTIONS";

/** Options of a {@link SandboxError} beyond its code and detail. */
export interface SandboxErrorOptions extends InsomniaErrorOptions {
  /** What to do about it, e.g. how to install bubblewrap (set for `SANDBOX_UNAVAILABLE`). */
  hint?: string | undefined;
}

/** The one error class of @insomnia/sandbox. */
export class SandboxError extends InsomniaError<SandboxErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.sandbox.error");
  override readonly name = "SandboxError";
  declare readonly hint?: string;

  constructor(code: SandboxErrorCode, detail: string, options: SandboxErrorOptions = {}) {
    const { hint, ...base } = options;
    super(code, detail, base);
    if (hint !== undefined) this.hint = hint;
  }

  /** True for a SandboxError from any installed copy of this package. */
  static is(value: unknown): value is SandboxError {
    return hasBrand(value, SandboxError.brand);
  }
}
