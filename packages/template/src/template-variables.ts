/** Type of a template value, as the checker sees it. */
export type VarType =
  | { readonly kind: "string" }
  | { readonly kind: "number" }
  | { readonly kind: "boolean" }
  | { readonly kind: "list"; readonly item: VarType }
  | { readonly kind: "object"; readonly members: Readonly<Record<string, VarType>> };

const STRING: VarType = { kind: "string" };
const STRING_LIST: VarType = { kind: "list", item: STRING };

/** The `scope` object: readable and writable paths and the formatted summary. */
export const SCOPE_TYPE: VarType = {
  kind: "object",
  members: { readable: STRING_LIST, writable: STRING_LIST, summary: STRING },
};

/** The root context of every template file. */
export const ROOT_TYPE: VarType = {
  kind: "object",
  members: { date: STRING, time: STRING, datetime: STRING, cwd: STRING, scope: SCOPE_TYPE, tools: STRING_LIST },
};

/** `@index`, `@first`, `@last`, `@key`: defined inside `{{#each}}`. */
export const EACH_DATA_TYPES: Readonly<Record<string, VarType>> = {
  index: { kind: "number" },
  key: { kind: "number" },
  first: { kind: "boolean" },
  last: { kind: "boolean" },
};

/** The template variables, for docs and tooling. */
export const TEMPLATE_VARIABLES: readonly string[] = Object.freeze([
  "date",
  "time",
  "datetime",
  "cwd",
  "scope.readable",
  "scope.writable",
  "scope.summary",
  "tools",
]);

/** The helpers a template may use. */
export const TEMPLATE_HELPERS: readonly string[] = Object.freeze(["if", "unless", "each", "with", "join"]);

/** "a string", "a list", ... for messages. */
export function describeType(type: VarType): string {
  switch (type.kind) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    case "list":
      return "a list";
    case "object":
      return "an object";
  }
}
