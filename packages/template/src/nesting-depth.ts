import { lexTokens, type Token } from "./handlebars-lexer.ts";

/** Deepest block nesting a file may have: far beyond any real prompt, far below where Handlebars' recursion overflows. */
export const MAX_NESTING_DEPTH = 100;

/** Where a file first nests deeper than allowed (1-based line and column). */
export interface TooDeep {
  line: number;
  column: number;
}

const OPENS = new Set(["OPEN_BLOCK", "OPEN_INVERSE", "OPEN_PARTIAL_BLOCK", "OPEN_RAW_BLOCK"]);

/**
 * Finds block nesting deeper than `max` before Handlebars parses the text: its parser
 * takes time quadratic in the depth and its compiler and runtime recurse once per level,
 * so a hostile file could keep the parser busy for a very long time or overflow the stack. `{{else if}}` chains count
 * as nesting (each one is a nested block in the AST), and so do subexpressions.
 */
export function findTooDeepNesting(text: string, max: number = MAX_NESTING_DEPTH): TooDeep | undefined {
  if (!mayNestDeeperThan(text, max)) return undefined;
  const nesting = new NestingTracker(max);
  let found: TooDeep | undefined;
  lexTokens(text, (token) => {
    found = nesting.add(token);
    return found === undefined;
  });
  return found;
}

/** Follows block nesting token by token; `add` returns where it first goes deeper than `max`. */
export class NestingTracker {
  // Each open block remembers how many `else if` levels were chained onto it.
  readonly #blocks: number[] = [];
  #depth = 0;

  constructor(readonly max: number) {}

  add(token: Token): TooDeep | undefined {
    const blocks = this.#blocks;
    if (OPENS.has(token.name)) {
      blocks.push(0);
      this.#depth += 1;
    } else if (token.name === "OPEN_INVERSE_CHAIN" && blocks.length > 0) {
      blocks[blocks.length - 1]! += 1;
      this.#depth += 1;
    } else if (token.name === "OPEN_SEXPR") {
      this.#depth += 1;
    } else if (token.name === "CLOSE_SEXPR") {
      this.#depth = Math.max(0, this.#depth - 1);
    } else if (token.name === "OPEN_ENDBLOCK" || token.name === "END_RAW_BLOCK") {
      this.#depth = Math.max(0, this.#depth - 1 - (blocks.pop() ?? 0));
    }
    return this.#depth > this.max ? { line: token.loc.first_line, column: token.loc.first_column + 1 } : undefined;
  }
}

/** Cheap upper bound: without more than `max` block, chain or subexpression openers there is nothing to lex. */
export function mayNestDeeperThan(text: string, max: number): boolean {
  let openers = 0;
  // The next `(` at or after the current tag; it only moves forward, so the scan is linear
  // even when the only `(` is at the end of the file.
  let paren = text.indexOf("(");
  for (let open = text.indexOf("{{"); open !== -1; ) {
    const close = text.indexOf("}}", open + 2);
    const end = close === -1 ? text.length : close;
    // The whole tag, not a prefix: Handlebars allows any whitespace before `else` in `{{   else if x}}`.
    const first = /[^{~\s]/.exec(text.slice(open + 2, end))?.[0];
    if (first === "#" || first === "^" || first === "e") openers += 1;
    if (paren !== -1 && paren < open) paren = text.indexOf("(", open);
    for (; paren !== -1 && paren < end; paren = text.indexOf("(", paren + 1)) openers += 1;
    if (openers > max) return true;
    if (close === -1) return false;
    open = text.indexOf("{{", close + 2);
  }
  return false;
}
