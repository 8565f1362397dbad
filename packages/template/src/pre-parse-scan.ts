import { lexTokens, StatementCounter, type Token } from "./handlebars-lexer.ts";
import { MAX_NESTING_DEPTH, mayNestDeeperThan, NestingTracker, type TooDeep } from "./nesting-depth.ts";

/** What the lexer's tokens say about a file before Handlebars parses it. */
export interface PreParseScan {
  /** Where blocks first nest deeper than MAX_NESTING_DEPTH. */
  readonly tooDeep?: TooDeep;
  /** More statements than the per-file cap. */
  readonly tooManyStatements: boolean;
  /** Every token of the file, when it was lexed whole, for the parser to use instead of lexing again. */
  readonly tokens?: readonly Token[];
}

/**
 * The two per-file caps that protect Handlebars' parser, checked on one pass of its lexer:
 * nesting deeper than MAX_NESTING_DEPTH anywhere in the file (reported before the statement
 * cap, as when they were two passes), and more than `maxStatements` statements. A file with
 * few enough `{{` for neither cap is not lexed here; a file that can only be over the
 * statement cap is lexed no further than the statement past it. Lexing is most of the cost
 * of parsing a large file, so a file lexed whole keeps its tokens for the parser.
 */
export function scanBeforeParsing(text: string, maxStatements: number): PreParseScan {
  const deepMaybe = mayNestDeeperThan(text, MAX_NESTING_DEPTH);
  const manyMaybe = mayHaveMoreStatementsThan(text, maxStatements);
  if (!deepMaybe && !manyMaybe) return { tooManyStatements: false };
  const nesting = new NestingTracker(MAX_NESTING_DEPTH);
  const counter = new StatementCounter();
  const tokens: Token[] = [];
  let tooDeep: TooDeep | undefined;
  const end = lexTokens(text, (token) => {
    tokens.push(token);
    counter.add(token);
    if (deepMaybe) {
      tooDeep = nesting.add(token);
      return tooDeep === undefined;
    }
    return counter.statements <= maxStatements;
  });
  if (tooDeep !== undefined) return { tooDeep, tooManyStatements: false };
  const tooManyStatements = counter.statements > maxStatements;
  return end.kind === "eof" && !tooManyStatements ? { tooManyStatements, tokens } : { tooManyStatements };
}

/**
 * Cheap upper bound on a file's statements: every statement but text begins with `{{`,
 * and there is at most one text between two of them, so n `{{` make at most 2n + 1.
 */
function mayHaveMoreStatementsThan(text: string, max: number): boolean {
  let opens = 0;
  for (let at = text.indexOf("{{"); at !== -1; at = text.indexOf("{{", at + 2)) {
    opens++;
    if (2 * opens + 1 > max) return true;
  }
  return false;
}

/**
 * Where Handlebars' lexer could begin an include (`{{>`, `{{#>`, with `~`): a text without it
 * has none. Conservative: one inside a comment or a raw block also counts.
 */
const MAY_INCLUDE = /\{\{~?#?>/;

/**
 * The statements of a file that includes nothing, counted by the lexer alone, so a tree's
 * expansion can be counted before any of its leaves is parsed. `undefined` when the file may
 * include something, is over a per-file cap, or does not lex to its end: the caller parses it
 * at once, and parsing reports exactly what is wrong. No token is kept.
 */
export function countLeafStatements(text: string, maxStatements: number): number | undefined {
  if (MAY_INCLUDE.test(text)) return undefined;
  const nesting = new NestingTracker(MAX_NESTING_DEPTH);
  const counter = new StatementCounter();
  let tooDeep: TooDeep | undefined;
  const end = lexTokens(text, (token) => {
    counter.add(token);
    tooDeep = nesting.add(token);
    return tooDeep === undefined && counter.statements <= maxStatements;
  });
  return end.kind === "eof" ? counter.statements : undefined;
}
