// Handlebars ships no types for the one file of it that is imported (handlebars-parser.ts).
declare module "handlebars/dist/cjs/handlebars/compiler/base.js" {
  /** The module's exports (CommonJS: the default export of an ES module import). */
  const base: {
    /** Handlebars.parse: the jison parser, then standalone-line and `~` whitespace control. */
    parse(input: string): unknown;
    /** The jison parser itself. */
    parser: { lexer: unknown };
  };
  export default base;
}
