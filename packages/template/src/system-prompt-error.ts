import { hasBrand, InsomniaError, setProblems } from "@insomnia/errors";

/** Every way parsing or rendering a system prompt template can fail. */
export type SystemPromptErrorCode =
  // parse phase
  | "SYNTAX"
  | "UNKNOWN_VARIABLE"
  | "UNKNOWN_HELPER"
  | "TYPE_ERROR"
  | "FORBIDDEN"
  | "INCLUDE_FAILED"
  | "CYCLE"
  | "TOO_DEEP"
  | "TOO_MANY_INCLUDES"
  | "EXPANSION_TOO_LARGE"
  // render phase
  | "INVALID_CONTEXT"
  | "RENDER_BUDGET_EXCEEDED"
  | "OUTPUT_TOO_LARGE"
  | "RENDER_FAILED";

/** When an error happened: while parsing (pod creation) or while rendering (first turn). */
export type SystemPromptErrorPhase = "parse" | "render";

const RENDER_CODES: ReadonlySet<SystemPromptErrorCode> = new Set<SystemPromptErrorCode>([
  "INVALID_CONTEXT",
  "RENDER_BUDGET_EXCEEDED",
  "OUTPUT_TOO_LARGE",
  "RENDER_FAILED",
]);

/** Location and cause attached to a SystemPromptError. */
export interface SystemPromptErrorOptions {
  /** Canonical reference of the file where the problem is ("$workspace/a"). */
  ref?: string | undefined;
  /** Real path of that file. */
  file?: string | undefined;
  /** 1-based line in that file. */
  line?: number | undefined;
  /** 1-based column in that file. */
  column?: number | undefined;
  /** Include chain from the root instruction to `ref`, root first. */
  chain?: readonly string[] | undefined;
  cause?: unknown;
}

/** The one error class of @insomnia/template; check `code` and `phase`, never the message. */
export class SystemPromptError extends InsomniaError<SystemPromptErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.template.error");
  override readonly name = "SystemPromptError";
  readonly phase: SystemPromptErrorPhase;
  /** Include chain from the root instruction to `ref`, root first. */
  declare readonly chain?: readonly string[];
  /** Every problem the same parse found, in document order, this error first; `[this]` when it was the only one. */
  declare readonly problems: readonly SystemPromptError[];

  constructor(code: SystemPromptErrorCode, detail: string, options: SystemPromptErrorOptions = {}) {
    // A cycle's detail already shows the whole chain.
    const via =
      code !== "CYCLE" && options.chain !== undefined && options.chain.length > 1
        ? `\n  included via ${options.chain.join(" -> ")}`
        : undefined;
    // The message names a template by its reference; a file or position without one points nowhere.
    const located = options.ref !== undefined;
    const { ref, file, line, column, cause } = options;
    super(
      code,
      detail,
      located ? { ref, file, line, column, cause, messageSuffix: via } : { cause, messageSuffix: via },
    );
    this.phase = RENDER_CODES.has(code) ? "render" : "parse";
    if (!located) Object.assign(this, definedOnly({ file, line, column }));
    if (options.chain !== undefined) this.chain = Object.freeze([...options.chain]);
  }

  /** True for a SystemPromptError from any installed copy of this package. */
  static is(value: unknown): value is SystemPromptError {
    return hasBrand(value, SystemPromptError.brand);
  }
}

function definedOnly(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/**
 * The first of `errors`, carrying all of them (each error's own `problems` flattened, in
 * order) as its `problems`; parse throws it so callers that want one error get the first.
 */
export function withProblems(first: SystemPromptError, errors: readonly SystemPromptError[]): SystemPromptError {
  return setProblems(first, errors);
}
