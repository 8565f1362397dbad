const BRAND = Symbol.for("insomnia.manifest.error");

/** Every way a manifest, a layer file or an overlay can be rejected. */
export type ManifestErrorCode =
  | "YAML_SYNTAX"
  | "YAML_ALIAS"
  | "YAML_MERGE_KEY"
  | "YAML_TAG"
  | "YAML_DIRECTIVE"
  | "YAML_DUPLICATE_KEY"
  | "YAML_MULTIPLE_DOCUMENTS"
  | "FORBIDDEN_KEY"
  | "UNKNOWN_KEY"
  | "INVALID_VALUE"
  | "SYSTEM_PROMPT_MOVED"
  | "INVALID_OVERLAY"
  | "READ_FAILED"
  | "NOT_A_MAPPING"
  | "TOO_LARGE";

/** Where and why a ManifestError happened; all fields optional. */
export interface ManifestErrorDetails {
  file?: string;
  line?: number;
  column?: number;
  key?: string;
  suggestion?: string;
  cause?: unknown;
}

/** A manifest problem, with the file, 1-based line and column, and dotted key where known. */
export class ManifestError extends Error {
  override readonly name = "ManifestError";
  readonly code: ManifestErrorCode;
  /** The message without the `file:line:column: ` prefix. */
  readonly detail: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  /** Dotted path of the offending key, e.g. `scope.allow[0].target`. */
  readonly key?: string;
  /** The known key a misspelt key probably meant. */
  readonly suggestion?: string;
  readonly [BRAND] = true;

  constructor(code: ManifestErrorCode, detail: string, details: ManifestErrorDetails = {}) {
    super(formatMessage(detail, details), details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.detail = detail;
    if (details.file !== undefined) this.file = details.file;
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
    if (details.key !== undefined) this.key = details.key;
    if (details.suggestion !== undefined) this.suggestion = details.suggestion;
  }

  /** True for a ManifestError from any installed copy of this package. */
  static is(value: unknown): value is ManifestError {
    return typeof value === "object" && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }
}

function formatMessage(detail: string, { file, line, column }: ManifestErrorDetails): string {
  let where = file ?? "";
  if (line !== undefined) where += `${where === "" ? "" : ":"}${line}${column === undefined ? "" : `:${column}`}`;
  return where === "" ? detail : `${where}: ${detail}`;
}
