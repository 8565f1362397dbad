export { FORBIDDEN_KEYS, MAX_YAML_DEPTH, parseSafeYaml } from "./safe-yaml.ts";
export type { NodePosition, PositionMap, SafeYamlResult } from "./safe-yaml.ts";
export type { SafeYamlCode, SafeYamlIssue } from "./safe-yaml-issue.ts";
export { formatKey, lineColumn, lineLocator, pathKey } from "./yaml-path.ts";
export type { LineLocator, PathSegments } from "./yaml-path.ts";
