import type { HbsProgram } from "./handlebars-ast.ts";
import type { JisonLocation, Token } from "./handlebars-lexer.ts";
import { lexableText, restoreStrings } from "./line-separators.ts";

type HandlebarsParserModule = typeof import("handlebars/dist/cjs/handlebars/compiler/base.js").default;

// Only Handlebars' parser is used: templates are rendered by compile-renderer.ts, never by
// Handlebars' compiler or runtime. `compiler/base.js` is what Handlebars.parse is (the
// same function, exported by every build of the release) and loads five small files (parser,
// whitespace control, AST helpers, utils, exception) instead of the whole library.
// handlebars is CommonJS and has no `exports` map, so the file is imported by its path.
// handlebars-parser.test.ts checks the ASTs are the main entry's.
let base: HandlebarsParserModule | undefined;

/**
 * Loads Handlebars' parser; the parsing functions below need it loaded first. It is imported
 * on demand (SystemPromptTemplate.parse awaits this only for a text that is not prebuilt), so
 * a run that renders only the builtin prompts never loads it (prebuilt-asts.ts).
 */
export async function loadHandlebarsParser(): Promise<void> {
  if (base !== undefined) return;
  try {
    base = (await import("handlebars/dist/cjs/handlebars/compiler/base.js")).default;
  } catch (cause) {
    // Not the template's fault: the installed handlebars is missing or laid out differently.
    throw new Error(
      "cannot load Handlebars' parser (handlebars/dist/cjs/handlebars/compiler/base.js); reinstall @insomnia/template's dependencies (handlebars ^4.7.10)",
      { cause },
    );
  }
}

function handlebars(): HandlebarsParserModule {
  if (base === undefined) throw new Error("Handlebars' parser is used before loadHandlebarsParser() finished");
  return base;
}

/** Parses template text into an AST (standalone lines and `~` whitespace control applied). */
export function parseTemplateText(text: string): HbsProgram {
  // Columns after a U+2028 or U+2029 on a line are those an editor shows (line-separators.ts).
  const lexable = lexableText(text);
  let ast: HbsProgram;
  try {
    ast = handlebars().parse(lexable.text) as HbsProgram;
  } catch (error) {
    // Its message quotes the text.
    if (error instanceof Error) error.message = lexable.restore(error.message);
    throw error;
  }
  restoreStrings(ast, lexable.restore);
  return ast;
}

/** The jison parser behind Handlebars.parse, for locating syntax errors. */
export function handlebarsParser(): unknown {
  return handlebars().parser;
}

/** A stand-in for the jison lexer that hands the parser tokens lexed before. */
function replayLexer(tokens: readonly Token[]) {
  let next = 0;
  return {
    yy: {},
    yytext: "",
    yyleng: 0,
    yylineno: 0,
    match: "",
    options: {},
    yylloc: undefined as JisonLocation | undefined,
    setInput(): void {
      next = 0;
      this.yylloc = { first_line: 1, first_column: 0, last_line: 1, last_column: 0 };
    },
    lex(): number | string {
      const token = tokens[next++];
      // 1 is jison's EOF; the tokens end with it anyway.
      if (token === undefined) return 1;
      this.yytext = token.text;
      this.match = token.text;
      this.yyleng = token.leng;
      this.yylineno = token.lineno;
      // Read, never written, by the parser (it builds its own locations from it).
      this.yylloc = token.loc;
      return token.id;
    },
  };
}

/**
 * parseTemplateText with the tokens a scan of the same text already produced (every token,
 * up to EOF): Handlebars.parse runs with a lexer that replays them, so a large file is
 * lexed once rather than twice. Handlebars' parser is a module-level object, so its lexer is
 * swapped for the (synchronous) call and put back. A text that does not parse is parsed
 * again the ordinary way, so its error is exactly Handlebars' own.
 */
export function parseTokens(text: string, tokens: readonly Token[]): HbsProgram {
  const module = handlebars();
  const parser = module.parser;
  const lexer = parser.lexer;
  let ast: HbsProgram | undefined;
  parser.lexer = replayLexer(tokens);
  try {
    ast = module.parse(text) as HbsProgram;
  } catch {
    ast = undefined;
  } finally {
    parser.lexer = lexer;
  }
  return ast ?? parseTemplateText(text);
}
