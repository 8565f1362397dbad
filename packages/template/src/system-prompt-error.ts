const BRAND = Symbol.for("insomnia.template.error");

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
export interface SystemPromptErrorDetails {
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
export class SystemPromptError extends Error {
  override readonly name = "SystemPromptError";
  readonly phase: SystemPromptErrorPhase;
  readonly code: SystemPromptErrorCode;
  readonly ref?: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly chain?: readonly string[];
  /** The message without the `ref:line:col: ` prefix and the chain suffix. */
  readonly detail: string;
  /** Every problem the same parse found, in document order, this error first; `[this]` when it was the only one. */
  readonly problems: readonly SystemPromptError[];
  readonly [BRAND] = true;

  constructor(code: SystemPromptErrorCode, detail: string, details: SystemPromptErrorDetails = {}) {
    super(formatMessage(code, detail, details), "cause" in details ? { cause: details.cause } : undefined);
    this.code = code;
    this.phase = RENDER_CODES.has(code) ? "render" : "parse";
    this.detail = detail;
    if (details.ref !== undefined) this.ref = details.ref;
    if (details.file !== undefined) this.file = details.file;
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
    if (details.chain !== undefined) this.chain = Object.freeze([...details.chain]);
    this.problems = Object.freeze([this]);
  }

  /** True for a SystemPromptError from any installed copy of this package. */
  static is(value: unknown): value is SystemPromptError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

function formatMessage(code: SystemPromptErrorCode, detail: string, d: SystemPromptErrorDetails): string {
  let where = d.ref ?? "";
  if (where !== "" && d.line !== undefined) where += `:${d.line}${d.column !== undefined ? `:${d.column}` : ""}`;
  let message = where === "" ? detail : `${where}: ${detail}`;
  // A cycle's detail already shows the whole chain.
  if (code !== "CYCLE" && d.chain !== undefined && d.chain.length > 1) {
    message += `\n  included via ${d.chain.join(" -> ")}`;
  }
  return message;
}

/**
 * The first of `errors`, carrying all of them (each error's own `problems` flattened, in
 * order) as its `problems`; parse throws it so callers that want one error get the first.
 */
export function withProblems(first: SystemPromptError, errors: readonly SystemPromptError[]): SystemPromptError {
  const all = errors.flatMap((error) => error.problems);
  const ordered = all[0] === first ? all : [first, ...all.filter((error) => error !== first)];
  (first as { problems: readonly SystemPromptError[] }).problems = Object.freeze(ordered);
  return first;
}
