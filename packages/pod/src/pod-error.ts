import { hasBrand, InsomniaError, type InsomniaErrorOptions } from "@insomnia/errors";
import type { ManifestOrigin } from "@insomnia/manifest";

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

/** Extra fields of a {@link PodError}: where the problem is (a segment log, a lock file, a template) and its cause. */
export type PodErrorOptions = InsomniaErrorOptions & {
  /** Where in the manifest the value that failed was set (see {@link PodError.origin}). */
  origin?: ManifestOrigin | undefined;
};

/** The one error class of @insomnia/pod. */
export class PodError extends InsomniaError<PodErrorCode> {
  static readonly brand = Symbol.for("insomnia.pod.error");
  override readonly name = "PodError";
  /**
   * The manifest value the failure is about, where a layer set it: `worker.instruction` when the
   * instruction itself cannot be loaded, a scope rule's `target` that cannot be resolved, or
   * `pod.pwd`. Taken from the manifest's provenance, so a user is shown the line they wrote.
   */
  declare readonly origin?: ManifestOrigin;

  constructor(code: PodErrorCode, detail: string, options: PodErrorOptions = {}) {
    const { origin, ...rest } = options;
    super(code, detail, rest);
    if (origin !== undefined) this.origin = origin;
  }

  /** True for a PodError from any installed copy of this package. */
  static is(value: unknown): value is PodError {
    return hasBrand(value, PodError.brand);
  }
}
