import type { IncludeSite } from "./check-template.ts";
import type {
  HbsBlock,
  HbsExpression,
  HbsMustache,
  HbsPartial,
  HbsPathExpression,
  HbsProgram,
  HbsStatement,
} from "./handlebars-ast.ts";
import { isScopedPath } from "./handlebars-ast.ts";
import type { BudgetSite, RenderBudget } from "./render-budget.ts";

/** What every renderer of one render call shares. */
export interface RenderRuntime {
  readonly budget: RenderBudget;
  /** The root context (the frozen render data). */
  readonly root: unknown;
  /** Renders the included file `target` (a canonical ref) with the root context. */
  include(target: string): string;
}

/** A compiled file: renders it with the root context. */
export type FileRenderer = (runtime: RenderRuntime) => string;

/** The position of the innermost `#each` iteration: `@index`, `@key`, `@first`, `@last`. */
interface Loop {
  readonly index: number;
  readonly last: boolean;
}

/** Where rendering is: the current item, the block parameters in effect, the innermost loop. */
interface Scope {
  readonly context: unknown;
  readonly params: readonly unknown[] | undefined;
  readonly loop: Loop | undefined;
  readonly parent: Scope | undefined;
}

type Render = (scope: Scope, runtime: RenderRuntime) => string;

/** Fixed text of a body, measured once: UTF-16 code units and UTF-8 bytes. */
interface Text {
  readonly text: string;
  readonly units: number;
  readonly bytes: number;
}

/** The innermost block around a statement, where output is reported; undefined at the top of a file. */
type Within = BudgetSite | undefined;
type Lookup = (scope: Scope, runtime: RenderRuntime) => unknown;

/** The block parameter names of every enclosing `#each`/`#with` body, innermost first: one per runtime Scope. */
type ParamNames = readonly (readonly string[])[];

const EMPTY: Render = () => "";

/**
 * Compiles a checked file into a renderer: a tree of closures that renders exactly what
 * Handlebars renders for the template language (noEscape, the five helpers with the
 * package's semantics, includes indented like Handlebars' standalone partials), counting
 * steps against the runtime's budget like the helpers it replaces, and every piece of
 * output (fixed text, a printed value, a join) as it is produced.
 *
 * Only checked ASTs are compiled: every path names a value the render data has, every
 * block is one of the four block helpers, every mustache with arguments is `join`. Text
 * is merged and measured at compile time; a render allocates only the scopes of
 * `#each`/`#with`.
 */
export function compileRenderer(ast: HbsProgram, ref: string, includes: readonly IncludeSite[]): FileRenderer {
  const body = new RendererCompiler(ref, includes).program(ast, [], undefined);
  return (runtime) => body({ context: runtime.root, params: undefined, loop: undefined, parent: undefined }, runtime);
}

/** `!value`, or an empty list: what `#if`, `#unless`, `#with` and `#each`'s `else` treat as empty. */
function isEmpty(value: unknown): boolean {
  return !value || (Array.isArray(value) && value.length === 0);
}

/** What `{{value}}` prints: nothing for null and undefined, the value as a string otherwise. */
function print(value: unknown): string {
  return value == null ? "" : typeof value === "string" ? value : String(value);
}

/** `list.map(String).join(separator)`, by concatenation (V8's join of a frozen array is slow). */
function joinList(list: readonly unknown[], separator: string): string {
  let out = "";
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const text = typeof item === "string" ? item : String(item);
    out = i === 0 ? text : out + separator + text;
  }
  return out;
}

/** How many lines of `text` Handlebars indents: every line except a last empty one. */
function indentedLineCount(text: string): number {
  let lines = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return text.endsWith("\n") || text === "" ? lines - 1 : lines;
}

/** Handlebars' indentation of a standalone partial: every line, except a last empty one, gets `indent`. */
function indentLines(text: string, indent: string): string {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === "" && i + 1 === lines.length) break;
    lines[i] = indent + lines[i];
  }
  return lines.join("\n");
}

/** `value[key]` when it is the value's own property, else undefined: the prototype is never reached. */
function own(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function member(from: Lookup, parts: readonly string[]): Lookup {
  if (parts.length === 0) return from;
  if (parts.length === 1) {
    const [a] = parts as [string];
    return (scope, runtime) => own(from(scope, runtime), a);
  }
  return (scope, runtime) => {
    let value = from(scope, runtime);
    for (let i = 0; i < parts.length && value !== undefined; i++) value = own(value, parts[i] as string);
    return value;
  };
}

function internal(detail: string): Error {
  return new Error(`internal error: ${detail} reached the renderer; the checker should have rejected it`);
}

class RendererCompiler {
  readonly #includes: ReadonlyMap<string, IncludeSite>;

  constructor(
    private readonly ref: string,
    includes: readonly IncludeSite[],
  ) {
    this.#includes = new Map(includes.map((site) => [site.partialName, site]));
  }

  site(node: { loc?: { start: { line: number; column: number } } | undefined }): BudgetSite {
    const start = node.loc?.start;
    return { ref: this.ref, line: start?.line, column: start === undefined ? undefined : start.column + 1 };
  }

  program(program: HbsProgram | undefined, names: ParamNames, within: Within): Render {
    if (program === undefined) return EMPTY;
    const parts: (string | Render)[] = [];
    for (const statement of program.body) {
      const part = this.statement(statement, names, within);
      const last = parts.length - 1;
      if (typeof part === "string") {
        if (part === "") continue;
        if (typeof parts[last] === "string") {
          parts[last] += part;
          continue;
        }
      }
      parts.push(part);
    }
    const measured = parts.map((part): Text | Render =>
      typeof part === "string" ? { text: part, units: part.length, bytes: Buffer.byteLength(part, "utf8") } : part,
    );
    const [first] = measured;
    if (first === undefined) return EMPTY;
    if (measured.length === 1) {
      if (typeof first === "function") return first;
      const { text, units, bytes } = first;
      return (_scope, runtime) => {
        runtime.budget.addMeasured(within, units, bytes);
        return text;
      };
    }
    return (scope, runtime) => {
      let out = "";
      for (let i = 0; i < measured.length; i++) {
        const part = measured[i] as Text | Render;
        if (typeof part === "function") out += part(scope, runtime);
        else {
          runtime.budget.addMeasured(within, part.units, part.bytes);
          out += part.text;
        }
      }
      return out;
    };
  }

  statement(node: HbsStatement, names: ParamNames, within: Within): string | Render {
    switch (node.type) {
      case "ContentStatement":
        return node.value;
      case "CommentStatement":
        return "";
      case "MustacheStatement":
        return this.mustache(node, names, within);
      case "BlockStatement":
        return this.block(node, names);
      case "PartialStatement":
        return this.include(node);
      default:
        throw internal(node.type);
    }
  }

  mustache(node: HbsMustache, names: ParamNames, within: Within): Render {
    if (node.params.length > 0) return this.join(node, names, within);
    const value = this.lookup(node.path, names);
    return (scope, runtime) => runtime.budget.add(within, print(value(scope, runtime)));
  }

  join(node: HbsMustache, names: ParamNames, within: Within): Render {
    const [listParam, separatorParam] = node.params as [HbsExpression, HbsExpression | undefined];
    const list = this.lookup(listParam, names);
    const at = this.site(node);
    let separator: Lookup;
    if (separatorParam === undefined) separator = () => ", ";
    else if (separatorParam.type === "StringLiteral") {
      const text = String(separatorParam.value);
      separator = () => text;
    } else separator = this.lookup(separatorParam, names);
    return (scope, runtime) => {
      const items = list(scope, runtime);
      const sep = String(separator(scope, runtime));
      if (!Array.isArray(items)) throw new TypeError("join was given something that is not a list");
      runtime.budget.step(at);
      return runtime.budget.add(within, joinList(items, sep));
    };
  }

  block(node: HbsBlock, names: ParamNames): Render {
    const path = node.path;
    const helper = path.type === "PathExpression" ? path.parts[0] : undefined;
    const [param] = node.params;
    if (param === undefined) throw internal(`{{#${String(helper)}}} without an argument`);
    const value = this.lookup(param, names);
    const at = this.site(node);
    // What the block's bodies produce is reported at the block.
    const inverse = this.program(node.inverse, names, at);
    switch (helper) {
      case "if":
      case "unless": {
        const fn = this.program(node.program, names, at);
        const negate = helper === "unless";
        return (scope, runtime) => {
          const chosen = isEmpty(value(scope, runtime)) !== negate ? inverse : fn;
          runtime.budget.step(at);
          return chosen(scope, runtime);
        };
      }
      case "with": {
        const fn = this.program(node.program, [node.program?.blockParams ?? [], ...names], at);
        return (scope, runtime) => {
          const context = value(scope, runtime);
          runtime.budget.step(at);
          return isEmpty(context)
            ? inverse(scope, runtime)
            : fn({ context, params: [context], loop: scope.loop, parent: scope }, runtime);
        };
      }
      case "each":
        return this.each(node, value, inverse, at, names);
      default:
        throw internal(`block helper ${String(helper)}`);
    }
  }

  each(node: HbsBlock, value: Lookup, inverse: Render, at: BudgetSite, names: ParamNames): Render {
    const blockParams = node.program?.blockParams ?? [];
    const fn = this.program(node.program, [blockParams, ...names], at);
    const withParams = blockParams.length > 0;
    return (scope, runtime) => {
      const budget = runtime.budget;
      const list = value(scope, runtime);
      budget.step(at);
      if (!Array.isArray(list)) throw new TypeError("#each was given something that is not a list");
      if (list.length === 0) return inverse(scope, runtime);
      let out = "";
      for (let index = 0; index < list.length; index++) {
        budget.step(at);
        const context: unknown = list[index];
        const loop = { index, last: index === list.length - 1 };
        out += fn({ context, params: withParams ? [context, index] : undefined, loop, parent: scope }, runtime);
      }
      return out;
    };
  }

  include(node: HbsPartial): Render {
    const name = node.name.type === "StringLiteral" ? String(node.name.value) : undefined;
    const site = name === undefined ? undefined : this.#includes.get(name);
    if (site === undefined) throw internal(`an include that is not in the file's include list (${String(name)})`);
    const at: BudgetSite = { ref: this.ref, line: site.line, column: site.column };
    const target = site.target;
    const indent = node.indent ?? "";
    return (_scope, runtime) => {
      const budget = runtime.budget;
      budget.step(at);
      budget.enter(target, at);
      let out: string;
      try {
        out = runtime.include(target);
      } finally {
        budget.leave();
      }
      if (indent === "") return out;
      budget.addCopies(at, indent, indentedLineCount(out));
      return indentLines(out, indent);
    };
  }

  lookup(expression: HbsExpression, names: ParamNames): Lookup {
    if (expression.type !== "PathExpression") throw internal(`a ${expression.type} argument`);
    const path: HbsPathExpression = expression;
    const [head, ...rest] = path.parts;
    if (path.depth > 0) throw internal("a parent path (../)");
    if (path.data) {
      if (head === "root") return member((_scope, runtime) => runtime.root, rest);
      if (rest.length > 0) throw internal(`a member of @${String(head)}`);
      switch (head) {
        case "index":
        case "key":
          return (scope) => scope.loop?.index;
        case "first":
          return (scope) => (scope.loop === undefined ? undefined : scope.loop.index === 0);
        case "last":
          return (scope) => scope.loop?.last;
        default:
          throw internal(`@${String(head)}`);
      }
    }
    const context: Lookup = (scope) => scope.context;
    if (head === undefined) return context;
    if (isScopedPath(path)) return member(context, path.parts);
    for (let up = 0; up < names.length; up++) {
      const index = (names[up] as readonly string[]).indexOf(head);
      if (index === -1) continue;
      const param: Lookup = (scope) => {
        let at: Scope | undefined = scope;
        for (let i = 0; i < up && at !== undefined; i++) at = at.parent;
        return at?.params?.[index];
      };
      return member(param, rest);
    }
    return member(context, path.parts);
  }
}
