import { didYouMeanSuffix, errorText } from "@insomnia/errors";
import type {
  HbsBlock,
  HbsExpression,
  HbsMustache,
  HbsNode,
  HbsPartial,
  HbsPathExpression,
  HbsProgram,
  HbsStatement,
} from "./handlebars-ast.ts";
import { isScopedPath } from "./handlebars-ast.ts";
import {
  SystemPromptError,
  withProblems,
  type SystemPromptErrorCode,
  type SystemPromptErrorOptions,
} from "./system-prompt-error.ts";
import {
  describeType,
  EACH_DATA_TYPES,
  ROOT_TYPE,
  TEMPLATE_HELPERS,
  TEMPLATE_VARIABLES,
  type VarType,
} from "./template-variables.ts";

/** One `{{> name}}` in a checked file. */
export interface IncludeSite {
  /** Canonical reference of the included file. */
  readonly target: string;
  /** The partial name the statement was rewritten to (unique per site). */
  readonly partialName: string;
  /** 1-based position of the `{{>` in the including file. */
  readonly line: number;
  readonly column: number;
  /** How many statements of the file, nested ones included, come before it or are it, in document order. */
  readonly ordinal: number;
}

/** A file whose AST passed every check and was rewritten for rendering. */
export interface CheckedTemplate {
  readonly ast: HbsProgram;
  readonly includes: readonly IncludeSite[];
  /** Statements in the file, nested ones included, includes counted as one. */
  readonly ownNodes: number;
}

/** Where the checked file is, for error locations. */
export interface CheckSite {
  readonly ref: string;
  readonly file?: string | undefined;
  readonly chain?: readonly string[] | undefined;
}

/** Resolves an include name relative to the checked file; throws a PromptLoaderError when invalid. */
export type ResolveInclude = (name: string) => string;

interface Frame {
  readonly context: CheckType;
  readonly params: ReadonlyMap<string, CheckType>;
  readonly inEach: boolean;
  readonly parent?: Frame;
}

/** The type of a value whose lookup already failed: it checks as anything, so one mistake is reported once. */
type CheckType = VarType | { readonly kind: "unknown" };

interface Resolved {
  readonly type: CheckType;
  readonly name: string;
}

/** Thrown by `fail` to abandon the rest of the current statement after recording its problem. */
const SKIP = Symbol("skip statement");

/** More problems than this in one file are not worth listing; the walk stops there. */
const MAX_PROBLEMS = 100;

const UNKNOWN: CheckType = { kind: "unknown" };

const BLOCK_HELPERS = new Set(["if", "unless", "each", "with"]);
/** The @variables a template can name (`@root` is refused, but the checker writes it): never block parameter names. */
const DATA_NAMES: ReadonlySet<string> = new Set(["index", "first", "last", "key", "root"]);
const ALL_NAMES = [...TEMPLATE_VARIABLES, "scope"];
const VARIABLE_LIST = TEMPLATE_VARIABLES.join(", ");

/**
 * Checks one parsed file against the template language (variables, helpers, forbidden
 * constructs) and rewrites it for rendering: includes become canonical partial names that
 * receive the root context, and root variables used inside `#each`/`#with` become
 * `@root.x` so they print the root value rather than a member of the current item.
 */
export function checkTemplate(ast: HbsProgram, site: CheckSite, resolveInclude: ResolveInclude): CheckedTemplate {
  const { checked, problems } = checkTemplateProblems(ast, site, resolveInclude);
  const [first] = problems;
  if (first !== undefined) throw withProblems(first, problems);
  return checked;
}

/**
 * checkTemplate that returns its problems (in document order) instead of throwing them,
 * with the includes whose names resolved even when there are problems, so a caller can
 * also report those of them that fail to load.
 */
export function checkTemplateProblems(
  ast: HbsProgram,
  site: CheckSite,
  resolveInclude: ResolveInclude,
): { checked: CheckedTemplate; problems: readonly SystemPromptError[] } {
  const checker = new Checker(site, resolveInclude);
  try {
    checker.program(ast, { context: ROOT_TYPE, params: new Map(), inEach: false });
  } catch (error) {
    if (error !== SKIP) throw error;
  }
  return { checked: { ast, includes: checker.includes, ownNodes: checker.nodes }, problems: checker.problems };
}

class Checker {
  readonly includes: IncludeSite[] = [];
  readonly problems: SystemPromptError[] = [];
  nodes = 0;

  constructor(
    private readonly site: CheckSite,
    private readonly resolveInclude: ResolveInclude,
  ) {}

  /** Records a problem and abandons the current statement. */
  fail(code: SystemPromptErrorCode, node: HbsNode | undefined, detail: string, cause?: unknown): never {
    this.report(code, node, detail, cause);
    throw SKIP;
  }

  /** Records a problem; the caller goes on checking. */
  report(code: SystemPromptErrorCode, node: HbsNode | undefined, detail: string, cause?: unknown): void {
    const start = node?.loc?.start;
    const details: SystemPromptErrorOptions = {
      ref: this.site.ref,
      file: this.site.file,
      line: start?.line,
      column: start === undefined ? undefined : start.column + 1,
      chain: this.site.chain,
    };
    this.problems.push(new SystemPromptError(code, detail, cause === undefined ? details : { ...details, cause }));
    // Past the cap, SKIP propagates to checkTemplate and ends the walk.
    if (this.problems.length >= MAX_PROBLEMS) throw SKIP;
  }

  program(program: HbsProgram | undefined, frame: Frame): void {
    if (program === undefined) return;
    for (const statement of program.body) {
      try {
        this.statement(statement, frame);
      } catch (error) {
        if (error !== SKIP || this.problems.length >= MAX_PROBLEMS) throw error;
      }
    }
  }

  /** The value of a block's argument, or UNKNOWN when checking it found a problem (already recorded). */
  recover(check: () => Resolved): Resolved {
    try {
      return check();
    } catch (error) {
      if (error !== SKIP || this.problems.length >= MAX_PROBLEMS) throw error;
      return { type: UNKNOWN, name: "" };
    }
  }

  statement(node: HbsStatement, frame: Frame): void {
    this.nodes++;
    switch (node.type) {
      case "ContentStatement":
      case "CommentStatement":
        return;
      case "MustacheStatement":
        return this.mustache(node, frame);
      case "BlockStatement":
        return this.block(node, frame);
      case "PartialStatement":
        return this.partial(node);
      case "PartialBlockStatement":
        return this.fail("FORBIDDEN", node, "partial blocks {{#> name}}...{{/name}} are not supported; use {{> name}}");
      case "Decorator":
      case "DecoratorBlock":
        return this.fail(
          "FORBIDDEN",
          node,
          node.type === "DecoratorBlock"
            ? "inline partials and decorator blocks ({{#*inline}}) are not supported; put the text in its own file and include it with {{> name}}"
            : "decorators ({{* name}}) are not supported",
        );
    }
  }

  noHash(node: HbsMustache | HbsBlock | HbsPartial, what: string): void {
    if (node.hash !== undefined && node.hash.pairs.length > 0) {
      this.report("FORBIDDEN", node.hash, `${what} takes no key=value arguments`);
    }
  }

  mustache(node: HbsMustache, frame: Frame): void {
    const path = node.path;
    if (path.type === "SubExpression") this.fail("FORBIDDEN", path, "subexpressions (...) are not supported");
    if (path.type !== "PathExpression") {
      this.fail(
        "FORBIDDEN",
        path,
        "a literal inside {{ }} is not supported; write the text directly (escape a literal {{ as \\{{)",
      );
    }
    const helper = helperName(path);
    if (helper === "join") return this.join(node, frame);
    if (helper !== undefined && BLOCK_HELPERS.has(helper)) {
      this.fail("FORBIDDEN", node, `"${helper}" is a block helper; write {{#${helper} ...}}...{{/${helper}}}`);
    }
    if (node.params.length > 0 || (node.hash !== undefined && node.hash.pairs.length > 0)) {
      this.fail(
        "UNKNOWN_HELPER",
        path,
        `"${path.original}" is not a helper${didYouMeanSuffix(path.original, TEMPLATE_HELPERS)}; the helpers are ${TEMPLATE_HELPERS.join(", ")}`,
      );
    }
    const resolved = this.resolve(path, frame);
    this.printable(resolved, path);
  }

  printable(resolved: Resolved, node: HbsNode): void {
    const { type, name } = resolved;
    if (type.kind === "list") {
      this.fail(
        "TYPE_ERROR",
        node,
        `{{${name}}} would print a list; write {{join ${name} ", "}} or loop with {{#each ${name}}}{{this}}{{/each}}`,
      );
    }
    if (type.kind === "object") {
      const members = Object.keys(type.members);
      const example = members.includes("summary") ? `${prefixed(name, "summary")}` : (members[0] ?? "cwd");
      this.fail("TYPE_ERROR", node, `{{${name}}} would print an object; print one of its members, e.g. {{${example}}}`);
    }
  }

  join(node: HbsMustache, frame: Frame): void {
    this.noHash(node, "join");
    const [list, separator, extra] = node.params;
    if (list === undefined) this.fail("TYPE_ERROR", node, 'join needs a list: {{join tools ", "}}');
    if (extra !== undefined)
      this.fail("TYPE_ERROR", extra, 'join takes a list and an optional separator: {{join tools ", "}}');
    const items = this.param(list, frame, "join");
    if (items.type.kind !== "list" && items.type.kind !== "unknown") {
      this.fail(
        "TYPE_ERROR",
        list,
        `join needs a list as its first argument, but "${items.name}" is ${describeType(items.type)}`,
      );
    }
    if (separator === undefined || separator.type === "StringLiteral") return;
    const sep = this.param(separator, frame, "join");
    if (sep.type.kind !== "string" && sep.type.kind !== "unknown") {
      this.fail(
        "TYPE_ERROR",
        separator,
        `join's separator must be a string, but "${sep.name}" is ${describeType(sep.type)}`,
      );
    }
  }

  param(param: HbsExpression, frame: Frame, helper: string): Resolved {
    if (param.type === "SubExpression") this.fail("FORBIDDEN", param, "subexpressions (...) are not supported");
    if (param.type !== "PathExpression") this.fail("FORBIDDEN", param, `the argument of ${helper} must be a variable`);
    return this.resolve(param, frame);
  }

  block(node: HbsBlock, frame: Frame): void {
    const path = node.path;
    if (!("open" in node.openStrip)) {
      // Only raw blocks are built without strip flags.
      this.fail(
        "FORBIDDEN",
        node,
        "raw blocks {{{{name}}}}...{{{{/name}}}} are not supported; to write a literal {{, escape it as \\{{",
      );
    }
    const helper = path.type === "PathExpression" ? helperName(path) : undefined;
    if (node.program === undefined) {
      const name = path.type === "PathExpression" ? path.original : "x";
      this.report("FORBIDDEN", node, `inverted sections {{^${name}}} are not supported; use {{#unless ${name}}}`);
      this.program(node.inverse, frame);
      return;
    }
    if (helper === undefined || !BLOCK_HELPERS.has(helper)) {
      if (path.type !== "PathExpression") this.report("FORBIDDEN", path, "subexpressions (...) are not supported");
      else if (helper === "join")
        this.report("FORBIDDEN", node, 'join is not a block helper; write {{join tools ", "}}');
      else {
        const known = ALL_NAMES.includes(path.original);
        this.report(
          known ? "FORBIDDEN" : "UNKNOWN_HELPER",
          path,
          known
            ? `sections {{#${path.original}}} are not supported; use {{#each ${path.original}}}, {{#if ${path.original}}} or {{#with ${path.original}}}`
            : `"${path.original}" is not a block helper${didYouMeanSuffix(path.original, [...BLOCK_HELPERS])}; the block helpers are if, unless, each, with`,
        );
      }
      // What the body would see is unknown: check it without reporting names it might define.
      const params = new Map<string, CheckType>((node.program.blockParams ?? []).map((p) => [p, UNKNOWN]));
      this.program(node.program, { context: UNKNOWN, params, inEach: true, parent: frame });
      this.program(node.inverse, frame);
      return;
    }
    this.noHash(node, `#${helper}`);
    const [param, extra] = node.params;
    if (param === undefined)
      this.report(
        "TYPE_ERROR",
        node,
        `{{#${helper}}} needs exactly one argument, e.g. {{#${helper} ${helper === "with" ? "scope" : "tools"}}}`,
      );
    if (extra !== undefined) this.report("TYPE_ERROR", extra, `{{#${helper}}} takes exactly one argument`);
    const value =
      param === undefined ? { type: UNKNOWN, name: "" } : this.recover(() => this.param(param, frame, `#${helper}`));
    const blockParams = node.program.blockParams ?? [];
    this.usableBlockParams(node, blockParams);
    if (helper === "if" || helper === "unless") {
      if (blockParams.length > 0) this.report("FORBIDDEN", node, `{{#${helper}}} takes no block parameters (as |x|)`);
      this.program(node.program, frame);
      this.program(node.inverse, frame);
      return;
    }
    if (helper === "each") {
      if (value.type.kind !== "list" && value.type.kind !== "unknown") {
        this.report(
          "TYPE_ERROR",
          param,
          `{{#each}} needs a list, but "${value.name}" is ${describeType(value.type)}; the lists are tools, scope.readable, scope.writable`,
        );
      }
      if (blockParams.length > 2)
        this.report("FORBIDDEN", node, "{{#each}} takes at most two block parameters: as |item index|");
      const item = value.type.kind === "list" ? value.type.item : UNKNOWN;
      const params = new Map<string, CheckType>();
      if (blockParams[0] !== undefined) params.set(blockParams[0], item);
      if (blockParams[1] !== undefined) params.set(blockParams[1], { kind: "number" });
      this.program(node.program, { context: item, params, inEach: true, parent: frame });
      this.program(node.inverse, frame);
      return;
    }
    if (value.type.kind !== "object" && value.type.kind !== "unknown") {
      this.report(
        "TYPE_ERROR",
        param,
        `{{#with}} needs an object (scope), but "${value.name}" is ${describeType(value.type)}`,
      );
    }
    if (blockParams.length > 1)
      this.report("FORBIDDEN", node, "{{#with}} takes at most one block parameter: as |value|");
    const context = value.type.kind === "object" ? value.type : UNKNOWN;
    const params = new Map<string, CheckType>();
    if (blockParams[0] !== undefined) params.set(blockParams[0], context);
    this.program(node.program, { context, params, inEach: frame.inEach, parent: frame });
    this.program(node.inverse, frame);
  }
  /**
   * Reports block parameter names Handlebars would not read as parameters: a helper's name
   * (`{{join x}}` would stop being the helper and print the parameter), the name of an
   * @variable (Handlebars looks block parameters up first, so `as |t index|` makes
   * `{{@index}}` print the item, in this block and every block inside it; `as |root|` does
   * the same to `@root`, through which root variables inside loops are read), or one that
   * reads as a `this` path (`as |a-this|`, see isScopedPath).
   */
  usableBlockParams(node: HbsBlock, names: readonly string[]): void {
    for (const name of names) {
      if (BLOCK_HELPERS.has(name) || name === "join") {
        this.report(
          "FORBIDDEN",
          node,
          `a block parameter cannot be named "${name}" like a helper; choose another name, e.g. as |item|`,
        );
      } else if (DATA_NAMES.has(name)) {
        this.report(
          "FORBIDDEN",
          node,
          `a block parameter cannot be named "${name}": Handlebars would read {{@${name}}} as the parameter, in this block and every block inside it; choose another name, e.g. as |item i|`,
        );
      } else if (/this\b/.test(name)) {
        this.report(
          "FORBIDDEN",
          node,
          `a block parameter cannot be named "${name}": Handlebars reads a name ending in "this" as the current item; choose another name`,
        );
      }
    }
  }

  partial(node: HbsPartial): void {
    const name = node.name;
    if (name.type === "SubExpression") {
      this.fail(
        "FORBIDDEN",
        node,
        "dynamic includes {{> (expr)}} are not supported; name the file: {{> common/header}}",
      );
    }
    if (node.params.length > 0 || (node.hash !== undefined && node.hash.pairs.length > 0)) {
      this.fail(
        "FORBIDDEN",
        node.params[0] ?? node.hash ?? node,
        "includes take no arguments; an included file always sees the root variables",
      );
    }
    let raw: string;
    if (name.type === "PathExpression" && !name.data && name.depth === 0) raw = name.original;
    else if (name.type === "StringLiteral" && typeof name.value === "string") raw = name.value;
    else this.fail("INCLUDE_FAILED", node, 'an include names a file: {{> common/header}} or {{> "$user/style"}}');
    let target: string;
    try {
      target = this.resolveInclude(raw);
    } catch (cause) {
      const why = errorText(cause);
      this.fail("INCLUDE_FAILED", node, `cannot include "${raw}": ${why}`, cause);
    }
    const start = node.loc?.start ?? { line: 1, column: 0 };
    const line = start.line;
    const column = start.column + 1;
    const partialName = `${target} <- ${this.site.ref}:${line}:${column}`;
    // The rewritten statement names a per-site partial and passes @root as its context.
    node.name = { type: "StringLiteral", value: partialName, original: partialName, loc: name.loc };
    node.params = [rootPath([], name.loc)];
    this.includes.push({ target, partialName, line, column, ordinal: this.nodes });
  }

  resolve(path: HbsPathExpression, frame: Frame): Resolved {
    const original = path.original;
    if (path.data) {
      const [head, ...rest] = path.parts;
      if (path.depth > 0) {
        this.fail(
          "FORBIDDEN",
          path,
          `parent paths (@../) are not supported; name the outer loop's index with a block parameter: {{#each tools as |tool i|}}...{{i}}`,
        );
      }
      if (head === "root") {
        this.fail(
          "FORBIDDEN",
          path,
          `@root is not supported; root variables are visible everywhere, write {{${rest.join(".") || "cwd"}}}`,
        );
      }
      const type = head === undefined ? undefined : own(EACH_DATA_TYPES, head);
      if (type === undefined) {
        this.fail(
          "UNKNOWN_VARIABLE",
          path,
          `unknown variable "${original}"${didYouMeanSuffix(original, ["@index", "@first", "@last", "@key"])}; inside {{#each}} the @variables are @index, @first, @last, @key`,
        );
      }
      if (!frame.inEach) this.fail("UNKNOWN_VARIABLE", path, `"${original}" is only defined inside {{#each}}`);
      return this.members({ type, name: original }, rest, path);
    }
    if (path.depth > 0) {
      this.fail(
        "FORBIDDEN",
        path,
        `parent paths (../) are not supported; root variables are visible everywhere, write {{${path.parts.join(".") || "cwd"}}}`,
      );
    }
    const scoped = isScopedPath(path);
    const [head, ...rest] = path.parts;
    if (head === undefined) return { type: frame.context, name: original };
    if (scoped) return this.members({ type: frame.context, name: "this" }, path.parts, path);

    for (let f: Frame | undefined = frame; f !== undefined; f = f.parent) {
      const param = f.params.get(head);
      if (param !== undefined) return this.members({ type: param, name: head }, rest, path);
    }
    // Any name may be a member of an item whose type is unknown.
    if (frame.context.kind === "unknown") return { type: UNKNOWN, name: original };
    const member = frame.context.kind === "object" ? own(frame.context.members, head) : undefined;
    if (member !== undefined) return this.members({ type: member, name: head }, rest, path);
    if (ROOT_TYPE.kind === "object") {
      const rootMember = own(ROOT_TYPE.members, head);
      if (rootMember !== undefined) {
        if (frame.context !== ROOT_TYPE) {
          // Handlebars would look the name up on the current item; point it at the root.
          const parts = [...path.parts];
          Object.assign(path, { data: true, parts: ["root", ...parts], original: `@root.${parts.join(".")}` });
        }
        return this.members({ type: rootMember, name: head }, rest, path);
      }
    }
    const visible = [...ALL_NAMES];
    for (let f: Frame | undefined = frame; f !== undefined; f = f.parent) visible.push(...f.params.keys());
    if (frame.context.kind === "object" && frame.context !== ROOT_TYPE)
      visible.push(...Object.keys(frame.context.members));
    this.fail(
      "UNKNOWN_VARIABLE",
      path,
      `unknown variable "${original}"${didYouMeanSuffix(original, visible)}; the variables are ${VARIABLE_LIST}`,
    );
  }

  members(start: Resolved, parts: readonly string[], node: HbsNode): Resolved {
    let current = start;
    for (const part of parts) {
      const type = current.type;
      if (type.kind === "unknown") return { type, name: prefixed(current.name, part) };
      if (type.kind === "list") {
        this.fail(
          "TYPE_ERROR",
          node,
          `"${current.name}" is a list and has no member "${part}"; use {{#each ${current.name}}}...{{/each}} or {{join ${current.name} ", "}}`,
        );
      }
      if (type.kind !== "object") {
        this.fail(
          "TYPE_ERROR",
          node,
          `"${current.name}" is ${describeType(type)} and has no member "${part}"; write {{${current.name}}}`,
        );
      }
      const member = own(type.members, part);
      const name = prefixed(current.name, part);
      if (member === undefined) {
        const candidates = Object.keys(type.members).map((m) => prefixed(current.name, m));
        this.fail(
          "UNKNOWN_VARIABLE",
          node,
          `"${current.name}" has no member "${part}"${didYouMeanSuffix(name, candidates)}; its members are ${candidates.join(", ")}`,
        );
      }
      current = { type: member, name };
    }
    return current;
  }
}

/** A record's own entry: `constructor`, `__proto__` and friends are never variables. */
function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function prefixed(parent: string, member: string): string {
  return parent === "" || parent === "this" || parent === "." ? member : `${parent}.${member}`;
}

function helperName(path: HbsExpression): string | undefined {
  if (path.type !== "PathExpression" || path.data || path.depth > 0 || path.parts.length !== 1) return undefined;
  if (isScopedPath(path)) return undefined;
  const name = path.parts[0];
  return name !== undefined && (BLOCK_HELPERS.has(name) || name === "join") ? name : undefined;
}

function rootPath(parts: readonly string[], loc: HbsNode["loc"]): HbsPathExpression {
  const original = ["@root", ...parts].join(".");
  return { type: "PathExpression", data: true, depth: 0, parts: ["root", ...parts], original, loc };
}
