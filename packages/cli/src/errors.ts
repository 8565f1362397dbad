import { InsomniaError } from "@insomnia/errors";
import { CliError } from "./cli-error.ts";
import { withNextStep } from "./next-step.ts";
import type { Problem } from "./problem.ts";

/** How `pod` treats a thrown value: the user's fault (exit 1 or 2, no stack) or a bug (stack). */
export type Classification =
  | { kind: "usage"; problem: Problem }
  | { kind: "user"; problem: Problem }
  | { kind: "internal" };

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

function isKnownUserError(value: unknown): value is InsomniaError {
  return InsomniaError.isInsomniaError(value) && !CliError.is(value) && !INTERNAL_CODES.has(value.code);
}

/**
 * One problem from an error's own fields: its file (else its reference), position, code and
 * detail. No package is special: an error standing for another's failure lists that failure
 * in `problems`, which already carries its place (a manifest value's, when a layer set it).
 */
export function problemFromUserError(error: InsomniaError, severity: Problem["severity"] = "error"): Problem {
  const file = error.file ?? error.ref;
  const cause = includeCause(error);
  return {
    ...(file === undefined ? {} : { file }),
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.column === undefined ? {} : { column: error.column }),
    code: error.code,
    ...(cause === undefined ? {} : { cause }),
    message: `${error.detail}${error.messageSuffix ?? ""}`,
    severity,
  };
}

/** The code behind a prompt that could not be read (NOT_FOUND, UNKNOWN_PREFIX, ...): the error's own code does not say which (docs/cli.md). */
function includeCause(error: InsomniaError): string | undefined {
  if (error.code !== "INCLUDE_FAILED" && error.code !== "INVALID_COMPACT_INSTRUCTION") return undefined;
  const cause: unknown = error.cause;
  return InsomniaError.isInsomniaError(cause) ? cause.code : undefined;
}

/** What an error reports first: itself, or the first problem of the failure it stands for. */
function firstProblem(error: InsomniaError): InsomniaError {
  return error.problems?.[0] ?? error;
}

/**
 * Every problem behind `error`, the first being `problem` (from classifyError); the rest are the
 * other problems it reports (`problems`, e.g. every problem a template parse found), in order.
 */
export function problemsOf(error: unknown, problem: Problem): Problem[] {
  if (!InsomniaError.isInsomniaError(error) || !Array.isArray(error.problems)) return [problem];
  return [problem, ...error.problems.slice(1).map((other) => problemFromUserError(other))];
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
    const problem = problemFromUserError(firstProblem(error));
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
