// The parts of the Handlebars 4 AST this package reads and rewrites. The bundled typings
// are looser than the parser's real output (e.g. `program` is absent on `{{^x}}` blocks).

/** A position: 1-based line, 0-based column (Handlebars' convention). */
export interface HbsPosition {
  line: number;
  column: number;
}

/** Source span of a node. */
export interface HbsLocation {
  start: HbsPosition;
  end: HbsPosition;
}

/** Any AST node. */
export interface HbsNode {
  type: string;
  loc?: HbsLocation | undefined;
}

/** A template or block body. */
export interface HbsProgram extends HbsNode {
  type: "Program";
  body: HbsStatement[];
  blockParams?: string[] | undefined;
  chained?: boolean | undefined;
}

/** `foo.bar`, `this`, `../x`, `@index`. */
export interface HbsPathExpression extends HbsNode {
  type: "PathExpression";
  data: boolean;
  depth: number;
  parts: string[];
  original: string;
}

/** `(helper arg)`. */
export interface HbsSubExpression extends HbsNode {
  type: "SubExpression";
  path: HbsExpression;
  params: HbsExpression[];
  hash?: HbsHash | undefined;
}

/** `"text"`, `1`, `true`, `undefined`, `null`. */
export interface HbsLiteral extends HbsNode {
  type: "StringLiteral" | "NumberLiteral" | "BooleanLiteral" | "UndefinedLiteral" | "NullLiteral";
  value?: unknown;
  original?: unknown;
}

/** `key=value` arguments. */
export interface HbsHash extends HbsNode {
  type: "Hash";
  pairs: { key: string; value: HbsExpression }[];
}

/** Anything that can be a parameter. */
export type HbsExpression = HbsPathExpression | HbsSubExpression | HbsLiteral;

/** `{{x}}`, `{{{x}}}`, `{{* decorator}}`. */
export interface HbsMustache extends HbsNode {
  type: "MustacheStatement" | "Decorator";
  path: HbsExpression;
  params: HbsExpression[];
  hash?: HbsHash | undefined;
}

/** `{{#x}}...{{/x}}`, `{{^x}}...{{/x}}`, `{{{{raw}}}}...{{{{/raw}}}}`, `{{#*inline}}`. */
export interface HbsBlock extends HbsNode {
  type: "BlockStatement" | "DecoratorBlock";
  path: HbsExpression;
  params: HbsExpression[];
  hash?: HbsHash | undefined;
  program?: HbsProgram | undefined;
  inverse?: HbsProgram | undefined;
  openStrip: { open?: boolean; close?: boolean };
}

/** `{{> name}}` and `{{#> name}}...{{/name}}`. */
export interface HbsPartial extends HbsNode {
  type: "PartialStatement" | "PartialBlockStatement";
  name: HbsExpression;
  params: HbsExpression[];
  hash?: HbsHash | undefined;
  program?: HbsProgram | undefined;
  indent?: string | undefined;
}

/**
 * Handlebars' own test for a path that starts at the current context (`.`, `./x`, `this`,
 * `this.x`): `/^\.|this\b/` on the original text, unanchored, so `a-this` and `xthis` count
 * too. Scoped paths are never helpers or block parameters.
 */
export function isScopedPath(path: HbsPathExpression): boolean {
  return /^\.|this\b/.test(path.original);
}

/** Literal text. */
export interface HbsContent extends HbsNode {
  type: "ContentStatement";
  value: string;
  original: string;
}

/** `{{! comment}}`. */
export interface HbsComment extends HbsNode {
  type: "CommentStatement";
  value: string;
}

/** A statement in a program body. */
export type HbsStatement = HbsMustache | HbsBlock | HbsPartial | HbsContent | HbsComment;
