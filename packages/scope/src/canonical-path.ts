import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import type { Stats } from "node:fs";
import * as path from "node:path";
import { ScopeError } from "./scope-error.ts";

/** Same bound as Linux's MAXSYMLINKS: the kernel would fail with ELOOP past it too. */
const MAX_SYMLINK_HOPS = 40;

/** Errors meaning "this component is not there (for us)": resolution continues lexically. */
const ABSENT_CODES = new Set(["ENOENT", "ENOTDIR", "EACCES", "ENAMETOOLONG"]);

/** Errors of the fast path after which the component-by-component walk decides. */
const FALLBACK_CODES = new Set([...ABSENT_CODES, "ELOOP"]);

const SEPARATORS = path.sep === "\\" ? /[\\/]/ : "/";

/**
 * Absolute, canonical form of a path: symlinks resolved through the nearest existing
 * ancestor, `..` applied after resolving what precedes it, missing parts kept lexically.
 * Relative paths resolve against `base` (default: the process cwd).
 */
export function canonicalPath(input: string, base?: string): string {
  checkPathString(input, "path");
  if (base !== undefined) checkPathString(base, "base");
  const full = absoluteUnnormalized(input, base);
  try {
    return realpathSync.native(full);
  } catch (error) {
    if (!FALLBACK_CODES.has(errnoCode(error) ?? "")) throw ioError(full, error);
  }
  return walk(full, input);
}

function checkPathString(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string") {
    throw new ScopeError("INVALID_PATH", `${what} must be a string, got ${typeof value}.`);
  }
  if (value.includes("\0")) {
    throw new ScopeError("INVALID_PATH", `${what} ${JSON.stringify(value)} contains a NUL byte; remove it.`, {
      path: value,
    });
  }
}

/** Joins without `path.resolve`, which would apply `..` before symlinks are known. */
function absoluteUnnormalized(input: string, base: string | undefined): string {
  if (path.isAbsolute(input)) return input;
  const from = base === undefined ? process.cwd() : absoluteUnnormalized(base, undefined);
  return input === "" ? from : from + path.sep + input;
}

function splitSegments(text: string): string[] {
  return text.split(SEPARATORS);
}

/**
 * POSIX resolution done by hand so that missing tails still resolve: `resolved` is always a
 * real existing location, `missing` the lexical remainder once a component is absent.
 */
function walk(full: string, input: string): string {
  const root = path.parse(full).root;
  // A stack: the next segment to visit is at the end.
  const todo = splitSegments(full.slice(root.length)).reverse();
  let resolved = root;
  const missing: string[] = [];
  let hops = 0;

  while (todo.length > 0) {
    const segment = todo.pop() as string;
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (missing.length > 0) missing.pop();
      else resolved = path.dirname(resolved);
      continue;
    }
    if (missing.length > 0) {
      missing.push(segment);
      continue;
    }
    const candidate = path.join(resolved, segment);
    let stats: Stats;
    try {
      stats = lstatSync(candidate);
    } catch (error) {
      if (!ABSENT_CODES.has(errnoCode(error) ?? "")) throw ioError(candidate, error);
      missing.push(segment);
      continue;
    }
    if (!stats.isSymbolicLink()) {
      resolved = candidate;
      continue;
    }
    hops += 1;
    if (hops > MAX_SYMLINK_HOPS) {
      throw new ScopeError(
        "SYMLINK_LOOP",
        `cannot resolve ${JSON.stringify(input)}: more than ${MAX_SYMLINK_HOPS} symlinks to follow at ${candidate} (a symlink loop?); fix or remove the link.`,
        { path: input },
      );
    }
    let target: string;
    try {
      target = readlinkSync(candidate);
    } catch (error) {
      throw ioError(candidate, error);
    }
    // The link's target replaces it; a relative target continues from the link's directory.
    const targetRoot = path.parse(target).root;
    if (targetRoot !== "") resolved = targetRoot;
    todo.push(...splitSegments(target.slice(targetRoot.length)).reverse());
  }

  try {
    // Gives the on-disk spelling on case-insensitive file systems.
    resolved = realpathSync.native(resolved);
  } catch {
    // Changed under us; the walked form is still the best answer.
  }
  return missing.length === 0 ? resolved : path.join(resolved, ...missing);
}

function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return error.code;
  }
  return undefined;
}

function ioError(at: string, cause: unknown): ScopeError {
  const code = errnoCode(cause) ?? "unknown error";
  return new ScopeError("INVALID_PATH", `cannot resolve ${at}: ${code}; check that the path is accessible.`, {
    cause,
    path: at,
  });
}
