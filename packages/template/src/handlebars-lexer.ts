import { handlebarsParser } from "./handlebars-parser.ts";

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
}

/** Every token of `text`, on a private lexer instance; stops at the first unrecognized text. */
export function lexAll(text: string): { tokens: Token[]; lexError?: { line: number; column: number } } {
  const parser = handlebarsParser() as JisonParser;
  const lexer = Object.create(parser.lexer) as JisonLexer;
  // Without a parser in yy the lexer throws a plain Error on unrecognized text.
  lexer.yy = {};
  lexer.setInput(text);
  const tokens: Token[] = [];
  // Every token but EOF consumes input, except in states where Handlebars' lexer can emit
  // empty tokens forever (e.g. a text ending in "}}}}" leaves it in its raw state): a
  // text of n characters has at most n + 1 real tokens, so more means it is stuck.
  const maxTokens = text.length + 2;
  for (;;) {
    let id: number | string;
    try {
      id = lexer.lex();
    } catch {
      const at = lexer.yylloc;
      return { tokens, lexError: { line: at.last_line, column: at.last_column + 1 } };
    }
    const name = typeof id === "number" ? (parser.terminals_[id] ?? String(id)) : id;
    tokens.push({ name, text: lexer.yytext, loc: { ...lexer.yylloc } });
    if (name === "EOF") return { tokens };
    if (tokens.length > maxTokens) {
      const at = lexer.yylloc;
      return { tokens, lexError: { line: at.last_line, column: at.last_column + 1 } };
    }
  }
}
