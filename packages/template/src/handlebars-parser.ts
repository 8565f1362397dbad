import { createRequire } from "node:module";
import type { HbsProgram } from "./handlebars-ast.ts";
import { lexableText, restoreStrings } from "./line-separators.ts";

interface HandlebarsParserModule {
  /** Handlebars.parse: the jison parser, then standalone-line and `~` whitespace control. */
  parse(input: string): unknown;
  /** The jison parser itself. */
  parser: unknown;
}

// Only Handlebars' parser is used: templates are rendered by compile-renderer.ts, never by
// Handlebars' compiler or runtime. `compiler/base.js` is what Handlebars.parse is (the
// same function, exported by every build of the release) and loads five small files (parser,
// whitespace control, AST helpers, utils, exception) instead of the whole library, so a
// process start loads less than with the single-file build. It is loaded on first use, since
// a run that renders only the builtin instruction gets its AST prebuilt (prebuilt-asts.ts).
// handlebars is CommonJS and has no `exports` map, so the file is required by its path.
// handlebars-parser.test.ts checks the ASTs are the main entry's.
let base: HandlebarsParserModule | undefined;

const PARSER_FILE = "handlebars/dist/cjs/handlebars/compiler/base.js";

function handlebars(): HandlebarsParserModule {
  if (base !== undefined) return base;
  try {
    base = createRequire(import.meta.url)(PARSER_FILE) as HandlebarsParserModule;
  } catch (cause) {
    // Not the template's fault: the installed handlebars is missing or laid out differently.
    throw new Error(
      `cannot load Handlebars' parser (${PARSER_FILE}); reinstall @insomnia/template's dependencies (handlebars ^4.7.10)`,
      { cause },
    );
  }
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
