import { hasBrand, InsomniaError } from "@insomnia/errors";

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
  | "TOO_LARGE"
  /** An untrusted workspace layer sets a value that widens what the pod can do (`pod trust`). */
  | "UNTRUSTED_WORKSPACE"
  /** No config directory (no HOME, no XDG_CONFIG_HOME) to keep trust records in. */
  | "NO_CONFIG_DIR";

/** Where and why a ManifestError happened; all fields optional. */
export interface ManifestErrorOptions {
  file?: string | undefined;
  line?: number | undefined;
  column?: number | undefined;
  /** Dotted path of the offending key, e.g. `scope.allow[0].target`. */
  key?: string | undefined;
  /** The known key a misspelt key probably meant. */
  suggestion?: string | undefined;
  cause?: unknown;
}

/** A manifest problem, with the file, 1-based line and column, and dotted key where known. */
export class ManifestError extends InsomniaError<ManifestErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.manifest.error");
  override readonly name = "ManifestError";
  /** Dotted path of the offending key, e.g. `scope.allow[0].target`. */
  declare readonly key?: string;
  /** The known key a misspelt key probably meant. */
  declare readonly suggestion?: string;

  constructor(code: ManifestErrorCode, detail: string, options: ManifestErrorOptions = {}) {
    super(code, detail, { file: options.file, line: options.line, column: options.column, cause: options.cause });
    if (options.key !== undefined) this.key = options.key;
    if (options.suggestion !== undefined) this.suggestion = options.suggestion;
  }

  /** True for a ManifestError from any installed copy of this package. */
  static is(value: unknown): value is ManifestError {
    return hasBrand(value, ManifestError.brand);
  }
}
