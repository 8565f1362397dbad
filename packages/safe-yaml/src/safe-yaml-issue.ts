/** What parseSafeYaml refuses; a manifest reports these codes as its own (`ManifestErrorCode`). */
export type SafeYamlCode =
  | "YAML_SYNTAX"
  | "YAML_ALIAS"
  | "YAML_TAG"
  | "YAML_DIRECTIVE"
  | "YAML_MERGE_KEY"
  | "YAML_DUPLICATE_KEY"
  | "YAML_MULTIPLE_DOCUMENTS"
  | "FORBIDDEN_KEY"
  | "INVALID_VALUE";

/** A problem in a YAML text; `offset` is a UTF-16 index into it. */
export interface SafeYamlIssue {
  code: SafeYamlCode;
  detail: string;
  offset?: number | undefined;
  key?: string;
  suggestion?: string;
  cause?: unknown;
}
