import { errorText } from "./error-text.ts";

/** What `toJSON()` of one of our errors returns: plain data that JSON, structuredClone and loggers keep. */
export interface ErrorJson {
  name: string;
  message: string;
  code?: string;
  detail?: string;
  file?: string;
  ref?: string;
  line?: number;
  column?: number;
  /** The underlying error, as the same kind of data (a string for a thrown non-object). */
  cause?: ErrorJson | string;
  /** Every problem of the same operation, when there was more than one; each without its own `problems`. */
  problems?: ErrorJson[];
  /** A class's own fields (`key`, `suggestion`, `rule`, `phase`, `chain`, …). */
  [field: string]: unknown;
}

const MAX_DEPTH = 8;
const SKIPPED = new Set(["name", "message", "stack", "cause", "problems"]);

/** Any thrown value as {@link ErrorJson}: own fields copied as plain data, causes followed, cycles cut. */
export function errorToJson(value: unknown): ErrorJson {
  return toJson(value, new Set(), 0, true);
}

function toJson(value: unknown, seen: Set<object>, depth: number, withProblems: boolean): ErrorJson {
  if (typeof value !== "object" || value === null) return { name: typeof value, message: errorText(value) };
  const name = readString(value, "name") ?? "Error";
  const out: ErrorJson = { name, message: readString(value, "message") ?? errorText(value) };
  if (seen.has(value) || depth >= MAX_DEPTH) return out;
  seen.add(value);
  try {
    for (const key of Object.keys(value)) {
      if (SKIPPED.has(key)) continue;
      const field = plainData((value as Record<string, unknown>)[key], seen, depth);
      if (field !== undefined) out[key] = field;
    }
    const cause = safeGet(value, "cause");
    if (cause !== undefined)
      out.cause =
        typeof cause === "object" && cause !== null ? toJson(cause, seen, depth + 1, false) : errorText(cause);
    const problems = safeGet(value, "problems");
    if (withProblems && Array.isArray(problems) && problems.length > 1) {
      out.problems = problems.map((problem) =>
        problem === value ? { ...out } : toJson(problem, new Set(seen).add(value), depth + 1, false),
      );
    }
  } finally {
    seen.delete(value);
  }
  return out;
}

function plainData(value: unknown, seen: Set<object>, depth: number): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object") return undefined;
  if (value instanceof Error) return toJson(value, seen, depth + 1, false);
  if (seen.has(value) || depth >= MAX_DEPTH) return undefined;
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => plainData(item, seen, depth + 1) ?? null);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const field = plainData((value as Record<string, unknown>)[key], seen, depth + 1);
      if (field !== undefined) out[key] = field;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function safeGet(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function readString(value: object, key: string): string | undefined {
  const field = safeGet(value, key);
  return typeof field === "string" ? field : undefined;
}
