import { InsomniaError } from "@insomnia/errors";
import { ManifestError } from "@insomnia/manifest";
import { PodError } from "@insomnia/pod";
import { PromptLoaderError } from "@insomnia/prompt-loader";
import { ScopeError } from "@insomnia/scope";
import { SystemPromptError } from "@insomnia/template";
import { CliError } from "./cli-error.ts";
import { withNextStep } from "./next-step.ts";
import type { Problem } from "./problem.ts";

/** How `pod` treats a thrown value: the user's fault (exit 1 or 2, no stack) or a bug (stack). */
export type Classification =
  | { kind: "usage"; problem: Problem }
  | { kind: "user"; problem: Problem }
  | { kind: "internal" };

/** An error of any @insomnia package: code, detail and location are fields, never parsed out of a message. */
type Located = InsomniaError;

/** A Node.js system error (ENOENT, EACCES, ...) about a path: the user's file system, not a bug. */
function isSystemError(value: unknown): value is NodeJS.ErrnoException & { path: string } {
  if (!(value instanceof Error)) return false;
  const error = value as NodeJS.ErrnoException;
  return (
    typeof error.code === "string" &&
    /^E[A-Z]+$/.test(error.code) &&
    typeof error.syscall === "string" &&
    typeof error.path === "string"
  );
}

// Misuse of a library API by its caller (here: by pod itself) is a bug, not the user's files.
const INTERNAL_CODES: ReadonlySet<string> = new Set([
  "NOT_MATERIALIZED",
  "POD_CLOSED",
  "INVALID_ARGUMENT",
  "BUSY",
  "DUPLICATE_TOOL",
  "NO_SYSTEM_PROMPT",
  "WORKER_IN_USE",
]);

/** Ours: any error built on the base, or (from a copy of a package older than the base) one carrying a known class brand. */
function isOurError(value: unknown): value is Located {
  return (
    InsomniaError.isInsomniaError(value) ||
    PodError.is(value) ||
    ManifestError.is(value) ||
    PromptLoaderError.is(value) ||
    SystemPromptError.is(value) ||
    ScopeError.is(value)
  );
}

function isKnownUserError(value: unknown): value is Located {
  return isOurError(value) && !CliError.is(value) && !INTERNAL_CODES.has(value.code);
}

/** The most specific error of a chain: a PodError wrapping a template error reports the template error. */
function innermost(error: Located): Located {
  let current: Located = error;
  for (let depth = 0; depth < 8; depth++) {
    const cause: unknown = current.cause;
    if (!PodError.is(current) || !isKnownUserError(cause)) break;
    current = cause;
  }
  return current;
}

/** Turns a known user error into a problem, from its fields: the file (else the reference or the scope path), position, code, detail. */
export function problemFromUserError(error: Located, severity: Problem["severity"] = "error"): Problem {
  const inner = innermost(error);
  // A pod error about a manifest value (an instruction that cannot be loaded, a scope rule,
  // pod.pwd) carries where the manifest set it: the line the user wrote.
  const origin = PodError.is(error) ? error.origin : undefined;
  const file =
    origin?.file ??
    inner.file ??
    error.file ??
    inner.ref ??
    error.ref ??
    (ScopeError.is(inner) ? inner.path : undefined);
  const line = origin !== undefined ? origin.line : (inner.line ?? (inner === error ? undefined : error.line));
  const column = origin !== undefined ? origin.column : (inner.column ?? (inner === error ? undefined : error.column));
  const cause = loaderCause(inner);
  return {
    ...(file === undefined ? {} : { file }),
    ...(line === undefined ? {} : { line }),
    ...(column === undefined ? {} : { column }),
    code: inner.code,
    ...(cause === undefined ? {} : { cause }),
    message: inner.detail === undefined ? inner.message : `${inner.detail}${inner.messageSuffix ?? ""}`,
    severity,
  };
}

/** The loader's code behind an INCLUDE_FAILED (NOT_FOUND, UNKNOWN_PREFIX, ...): the template's code alone does not say which. */
function loaderCause(error: Located): string | undefined {
  if (!SystemPromptError.is(error) || error.code !== "INCLUDE_FAILED") return undefined;
  const cause: unknown = error.cause;
  return PromptLoaderError.is(cause) ? cause.code : undefined;
}

/**
 * Every problem behind `error`, the first being `problem` (from classifyError); the rest are the
 * other problems the template parse found (`SystemPromptError.problems`), in order.
 */
export function problemsOf(error: unknown, problem: Problem): Problem[] {
  const inner: unknown = PodError.is(error) && error.code === "INVALID_SYSTEM_PROMPT_TEMPLATE" ? error.cause : error;
  if (!SystemPromptError.is(inner) || !Array.isArray(inner.problems)) return [problem];
  return [problem, ...inner.problems.slice(1).map((other) => problemFromUserError(other))];
}

/** Classifies a thrown value: our packages' errors and file-system errors are the user's; anything else is a bug. */
export function classifyError(error: unknown): Classification {
  if (CliError.is(error)) {
    const problem: Problem = {
      code: error.code,
      message: error.detail,
      severity: "error",
      ...(error.file === undefined ? {} : { file: error.file }),
      ...(error.line === undefined ? {} : { line: error.line }),
      ...(error.column === undefined ? {} : { column: error.column }),
    };
    return { kind: error.kind, problem };
  }
  if (isKnownUserError(error)) {
    const problem = problemFromUserError(error);
    return { kind: "user", problem: { ...problem, message: withNextStep(problem.code, problem.message) } };
  }
  if (isSystemError(error)) {
    return {
      kind: "user",
      problem: { file: error.path, code: error.code ?? "EIO", message: error.message, severity: "error" },
    };
  }
  return { kind: "internal" };
}
