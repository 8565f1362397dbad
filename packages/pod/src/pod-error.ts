import { hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";

/** Machine-readable reason of a {@link PodError}. */
export type PodErrorCode =
  | "INVALID_SYSTEM_PROMPT_TEMPLATE"
  | "SYSTEM_PROMPT_RENDER"
  | "INVALID_SCOPE"
  | "WORKER_IN_USE"
  | "NOT_MATERIALIZED"
  | "POD_CLOSED"
  | "INVALID_ARGUMENT"
  | "NEWER_LOG_FORMAT"
  /** The provider refused the prompt as too long and compacting once did not make it fit. */
  | "CONTEXT_OVERFLOW"
  /** `compact()`: the model's summary would not bring the conversation under the threshold; not applied. */
  | "COMPACTION_INEFFECTIVE"
  /** `compact()`: the summary call failed or gave no summary; not applied. */
  | "COMPACTION_FAILED"
  /** `worker.compact_instruction` names a prompt that cannot be read. */
  | "INVALID_COMPACT_INSTRUCTION";

/** Extra fields of a {@link PodError}: where the problem is (a segment log, a lock file, a template), its cause and what it reports. */
export type PodErrorOptions = InsomniaErrorOptions;

/**
 * The one error class of @insomnia/pod. One that stands for another package's failure (a
 * template's, a scope's) has it as `cause` and reports its problems (`problems`), which carry
 * their own positions, a manifest value's among them.
 */
export class PodError extends InsomniaError<PodErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.pod.error");
  override readonly name = "PodError";

  constructor(code: PodErrorCode, detail: string, options: PodErrorOptions = {}) {
    super(code, detail, options);
  }

  /** True for a PodError from any installed copy of this package. */
  static is(value: unknown): value is PodError {
    return hasBrand(value, PodError.brand);
  }
}
