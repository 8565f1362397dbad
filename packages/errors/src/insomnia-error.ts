import { errorToJson, type ErrorJson } from "./error-json.ts";

/** Where a problem is: a file, a prompt reference, and a 1-based line and column in it. */
export interface ErrorLocation {
  /** Absolute (or as-given) path of the file the problem is in. */
  file?: string | undefined;
  /** The prompt reference the problem is in, e.g. `$workspace/main`; shown instead of `file` when both are set. */
  ref?: string | undefined;
  /** 1-based line. */
  line?: number | undefined;
  /** 1-based column. */
  column?: number | undefined;
}

/** What every error of ours may carry besides its code and detail. */
export interface InsomniaErrorOptions extends ErrorLocation {
  /** The underlying error, if any. */
  cause?: unknown;
  /** Lines appended to the message after the detail, e.g. an include chain. */
  messageSuffix?: string | undefined;
  /**
   * What this error reports (see {@link InsomniaError.problems}) when that is not itself: an
   * error standing for another package's failure (a pod's around a template's) lists that failure's problems.
   */
  problems?: readonly InsomniaError[] | undefined;
}

const BASE_BRAND = Symbol.for("insomnia.error");

/**
 * The base of every error class of the @insomnia packages. A subclass adds its code union,
 * its own `name`, a `static readonly brand: unique symbol = Symbol.for("insomnia.<package>.error")` and a
 * one-line `static is(value)` built on {@link hasBrand}.
 */
export abstract class InsomniaError<Code extends string = string> extends Error {
  /** Machine-readable reason; check this, never the message. */
  readonly code: Code;
  /** The message without its location prefix (and without any suffix). */
  readonly detail: string;
  declare readonly file?: string;
  declare readonly ref?: string;
  declare readonly line?: number;
  declare readonly column?: number;
  /**
   * What a reporter shows for this error, each entry from its own fields (code, location,
   * detail): every problem found by the same operation, this error first; `[this]` when it was
   * the only one; the problems of the failure it stands for when built with
   * {@link InsomniaErrorOptions.problems}. Not enumerable, so loggers that walk own keys see no cycle.
   */
  declare readonly problems: readonly InsomniaError[];
  /** What the message adds after the detail (e.g. an include chain), so an error wrapping this one can repeat it. */
  declare readonly messageSuffix?: string;

  constructor(code: Code, detail: string, options: InsomniaErrorOptions = {}) {
    super(formatErrorMessage(detail, options), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.detail = detail;
    if (options.file !== undefined) this.file = options.file;
    if (options.ref !== undefined) this.ref = options.ref;
    if (options.line !== undefined) this.line = options.line;
    if (options.column !== undefined) this.column = options.column;
    const problems = options.problems === undefined || options.problems.length === 0 ? [this] : [...options.problems];
    Object.defineProperty(this, "problems", { value: Object.freeze(problems), writable: true, configurable: true });
    if (options.messageSuffix !== undefined)
      Object.defineProperty(this, "messageSuffix", { value: options.messageSuffix });
    Object.defineProperty(this, BASE_BRAND, { value: true });
    const brand = (new.target as { brand?: unknown }).brand;
    if (typeof brand === "symbol") Object.defineProperty(this, brand, { value: true });
  }

  /** Plain, cycle-free data: code, detail, message, location, the class's own fields, cause and problems. */
  toJSON(): ErrorJson {
    return errorToJson(this);
  }

  /** True for an error of any @insomnia package, from any installed copy. */
  static isInsomniaError(value: unknown): value is InsomniaError {
    return hasBrand(value, BASE_BRAND);
  }
}

/** True when `value` is an object carrying `brand` (set by the {@link InsomniaError} constructor). */
export function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** `where: detail` (`ref` or else `file`, then `:line:column` when known) plus the suffix: the one message format of every error. */
export function formatErrorMessage(detail: string, options: InsomniaErrorOptions = {}): string {
  const where = formatErrorLocation(options);
  return `${where === "" ? detail : `${where}: ${detail}`}${options.messageSuffix ?? ""}`;
}

/** `ref:line:column`, `file:line`, `line:column`, … — the known parts, or the empty string. */
export function formatErrorLocation({ file, ref, line, column }: ErrorLocation): string {
  let where = ref ?? file ?? "";
  if (line !== undefined) where += `${where === "" ? "" : ":"}${line}${column === undefined ? "" : `:${column}`}`;
  return where;
}

/** Replaces the `problems` of `first` with every problem of `errors` (flattened, in order), `first` leading. */
export function setProblems<E extends InsomniaError>(first: E, errors: readonly InsomniaError[]): E {
  const all = errors.flatMap((error) => error.problems ?? [error]);
  const ordered = all[0] === first ? all : [first, ...all.filter((error) => error !== first)];
  Object.defineProperty(first, "problems", { value: Object.freeze(ordered), writable: true, configurable: true });
  return first;
}
