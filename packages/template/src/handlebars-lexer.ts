import { handlebarsParser } from "./handlebars-parser.ts";
import { lexableText } from "./line-separators.ts";

/** A jison source location (lines 1-based, columns 0-based). */
export interface JisonLocation {
  first_line: number;
  first_column: number;
  last_line: number;
  last_column: number;
}

/** The parts of Handlebars' jison lexer we drive directly. */
export interface JisonLexer {
  yy: unknown;
  yytext: string;
  yyleng: number;
  yylineno: number;
  yylloc: JisonLocation;
  setInput(input: string): void;
  lex(): number | string;
}

/** The parts of Handlebars' jison parser we drive directly. */
export interface JisonParser {
  yy: Record<string, unknown>;
  lexer: JisonLexer;
  terminals_: Record<number, string>;
  parse(input: string): unknown;
}

/** One lexed token. */
export interface Token {
  name: string;
  text: string;
  loc: JisonLocation;
  /** What the lexer returned (a symbol number or name), its yyleng and yylineno: what the parser reads. */
  id: number | string;
  leng: number;
  lineno: number;
}

/** Where lexing stopped: at the end, at unrecognized text (a lexical error), or because `visit` asked. */
export type LexEnd =
  | { readonly kind: "eof" }
  | { readonly kind: "invalid" }
  | { readonly kind: "stopped" }
  | { readonly kind: "error"; readonly line: number; readonly column: number };

/**
 * Lexes `text` on a private lexer instance, handing each token to `visit` until it returns
 * false. Stops at the end, at the first unrecognized text, and after the first INVALID
 * token: Handlebars' parser accepts no INVALID token, so nothing after one is ever parsed,
 * and stopping there is what keeps lexing linear. A lexer rule that fails only after
 * scanning to the end of the text (a `[` with no `]` after it, a `"` with no closing
 * quote, `{{!` with no `}}`) is always followed by an INVALID token, so it fails once per
 * file instead of once per character (`{{[` × 40,000 took quadratic time).
 */
export function lexTokens(text: string, visit: (token: Token) => boolean): LexEnd {
  const parser = handlebarsParser() as JisonParser;
  const lexer = Object.create(parser.lexer) as JisonLexer;
  // Without a parser in yy the lexer throws a plain Error on unrecognized text.
  lexer.yy = {};
  // Positions past a U+2028 or U+2029 as an editor shows them (line-separators.ts).
  const lexable = lexableText(text);
  lexer.setInput(lexable.text);
  // Every token but EOF consumes input, except in states where Handlebars' lexer can emit
  // empty tokens forever (e.g. a text ending in "}}}}" leaves it in its raw state): a
  // text of n characters has at most n + 1 real tokens, so more means it is stuck.
  const maxTokens = text.length + 2;
  for (let count = 1; ; count++) {
    let id: number | string;
    try {
      id = lexer.lex();
    } catch {
      const at = lexer.yylloc;
      return { kind: "error", line: at.last_line, column: at.last_column + 1 };
    }
    const name = typeof id === "number" ? (parser.terminals_[id] ?? String(id)) : id;
    const token: Token = {
      name,
      text: lexable.restore(lexer.yytext),
      // jison makes a new yylloc for every token, so it is kept, not copied.
      loc: lexer.yylloc,
      id,
      leng: lexer.yyleng,
      lineno: lexer.yylineno,
    };
    if (!visit(token)) return { kind: "stopped" };
    if (name === "EOF") return { kind: "eof" };
    if (name === "INVALID") return { kind: "invalid" };
    if (count > maxTokens) {
      const at = lexer.yylloc;
      return { kind: "error", line: at.last_line, column: at.last_column + 1 };
    }
  }
}

/** Every token of `text` up to where Handlebars' parser must stop (see lexTokens); `lexError` at unrecognized text. */
export function lexAll(text: string): { tokens: Token[]; lexError?: { line: number; column: number } } {
  const tokens: Token[] = [];
  const end = lexTokens(text, (token) => {
    tokens.push(token);
    return true;
  });
  return end.kind === "error" ? { tokens, lexError: { line: end.line, column: end.column } } : { tokens };
}

/** Tokens that begin a statement of the AST (a `{{else if}}` link is a nested block). */
const STATEMENT_TOKENS: ReadonlySet<string> = new Set([
  "CONTENT",
  "COMMENT",
  "OPEN",
  "OPEN_UNESCAPED",
  "OPEN_BLOCK",
  "OPEN_INVERSE",
  "OPEN_INVERSE_CHAIN",
  "OPEN_PARTIAL",
  "OPEN_PARTIAL_BLOCK",
  "OPEN_RAW_BLOCK",
]);

/** Tokens that open a block a closer ends. */
const BLOCK_OPENERS: ReadonlySet<string> = new Set([
  "OPEN_BLOCK",
  "OPEN_INVERSE",
  "OPEN_PARTIAL_BLOCK",
  "OPEN_RAW_BLOCK",
]);
/** Tokens that close a block. */
const BLOCK_CLOSERS: ReadonlySet<string> = new Set(["OPEN_ENDBLOCK", "END_RAW_BLOCK"]);

/**
 * Counts the statements tokens begin. A closer with no open block counts as one too: the
 * file does not parse, and without it a file of nothing but `{{/if}}` was lexed whole,
 * twice, before that was found.
 */
export class StatementCounter {
  statements = 0;
  #open = 0;

  add(token: Token): void {
    if (STATEMENT_TOKENS.has(token.name)) this.statements++;
    if (BLOCK_OPENERS.has(token.name)) this.#open++;
    else if (BLOCK_CLOSERS.has(token.name)) {
      if (this.#open === 0) this.statements++;
      else this.#open--;
    }
  }
}

/**
 * True when the tokens of `text` begin more than `max` statements; lexes no further than
 * the statement past `max`, so its cost is bounded by `max`, not by the text.
 */
export function hasMoreStatementsThan(text: string, max: number): boolean {
  const counter = new StatementCounter();
  const end = lexTokens(text, (token) => {
    counter.add(token);
    return counter.statements <= max;
  });
  return end.kind === "stopped";
}
