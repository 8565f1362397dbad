export { canonicalPath } from "./canonical-path.ts";
export { Scope } from "./scope.ts";
export type {
  ExplainOptions,
  PermissionExplanation,
  ScopeData,
  ScopeOptions,
  ScopeRuleRef,
  ScopeRules,
} from "./scope.ts";
export type { Permission, RulePermission, ScopeConfig, ScopeRule } from "./scope-config.ts";
export { ScopeError } from "./scope-error.ts";
export type { ScopeErrorCode, ScopeErrorOptions } from "./scope-error.ts";
