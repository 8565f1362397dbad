import { didYouMean } from "@insomnia/errors";
import { FsToolsError } from "./fs-tools-error.ts";

/** Longest `path` input accepted (Linux PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;

type FieldType = "path" | "string" | "non-empty string" | "positive integer";

/** One field of a tool's input: its type and whether it must be there. */
export interface FieldSpec {
  readonly type: FieldType;
  readonly required: boolean;
}

/**
 * Checks a tool call's input against its fields and returns it typed; a wrong shape is an
 * INVALID_INPUT refusal saying which field and what to send (never a crash).
 */
export function checkInput<T>(tool: string, input: unknown, fields: Readonly<Record<string, FieldSpec>>): T {
  const names = Object.keys(fields);
  const fail = (detail: string): FsToolsError =>
    new FsToolsError("INVALID_INPUT", `${tool}: ${detail}; nothing was accessed`, { tool });
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw fail(`the input must be an object with ${names.map((n) => `"${n}"`).join(", ")}, got ${describe(input)}`);
  }
  const record = input as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (Object.hasOwn(fields, key)) continue;
    const missing = names.filter((n) => fields[n]!.required && record[n] === undefined);
    const hint = didYouMean(key, names) ?? (missing.length === 1 && key.endsWith(missing[0]!) ? missing[0] : undefined);
    throw fail(
      `unknown field "${key}"${hint === undefined ? "" : ` (did you mean "${hint}"?)`}; the fields are ${names.join(", ")}`,
    );
  }
  for (const [name, spec] of Object.entries(fields)) {
    const value = record[name];
    if (value === undefined) {
      if (spec.required) throw fail(`"${name}" is missing (${phrase(spec.type)})`);
      continue;
    }
    const problem = typeProblem(value, spec.type);
    if (problem !== undefined) throw fail(`"${name}" must be ${phrase(spec.type)}, got ${problem}`);
  }
  return record as T;
}

function typeProblem(value: unknown, type: FieldType): string | undefined {
  switch (type) {
    case "positive integer":
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? undefined : describe(value);
    case "string":
      return typeof value === "string" ? undefined : describe(value);
    case "non-empty string":
      return typeof value === "string" && value !== "" ? undefined : describe(value);
    case "path":
      if (typeof value !== "string" || value === "") return describe(value);
      if (value.includes("\0")) return "a path with a NUL byte";
      if (value.length > MAX_PATH_LENGTH)
        return `a path of ${value.length} characters (the limit is ${MAX_PATH_LENGTH})`;
      return undefined;
  }
}

function phrase(type: FieldType): string {
  switch (type) {
    case "path":
      return "a non-empty path, absolute or relative to the working directory";
    case "positive integer":
      return "a whole number of 1 or more";
    default:
      return `a ${type}`;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return value === "" ? "an empty string" : `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "number") return String(value);
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
