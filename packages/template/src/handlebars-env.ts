import { createRequire } from "node:module";
import type { HbsProgram } from "./handlebars-ast.ts";

type HandlebarsModule = typeof import("handlebars");
type CompileOptions = NonNullable<Parameters<HandlebarsModule["compile"]>[1]>;

// handlebars is CommonJS with `module.exports = handlebars`: Node's ESM loader exposes no
// named exports for it, and its typings use `export =`, so load it the CommonJS way.
// The package's single-file build, not its main entry: the same release, parser and
// runtime, but one file instead of 44, and without the source-map library, which the
// main entry's code generator loads and builds every compiled template through (unused
// here: we never ask for source maps). That is ~14 ms less to start a process and ~15%
// less to compile a file; the generated code only skips Handlebars' local aliasing of
// repeated helper lookups, and renders the same (checked in handlebars-env.test.ts).
const Handlebars = createRequire(import.meta.url)("handlebars/dist/handlebars.js") as HandlebarsModule;

/** The compiled form of one checked file. */
export type CompiledTemplate = (context: unknown, options?: Record<string, unknown>) => string;

interface CompilerInternals {
  Compiler: new () => { compile(ast: HbsProgram, options: CompileOptions): unknown };
  JavaScriptCompiler: new () => {
    compile(environment: unknown, options: CompileOptions, context: undefined, asObject: true): unknown;
  };
  template(spec: unknown): CompiledTemplate;
}

/** The five helpers; everything else (log, lookup, helperMissing, ...) is unknown to the compiler. */
const KNOWN_HELPERS = {
  if: true,
  unless: true,
  each: true,
  with: true,
  join: true,
  log: false,
  lookup: false,
  helperMissing: false,
  blockHelperMissing: false,
} as const;

/** Compile options every file is compiled with. */
export const COMPILE_OPTIONS: CompileOptions = {
  data: true,
  noEscape: true,
  strict: true,
  knownHelpersOnly: true,
  knownHelpers: KNOWN_HELPERS,
  compat: false,
  preventIndent: false,
};

// One isolated environment for the whole module: it holds no helpers, partials or
// decorators, so nothing registered on the global Handlebars reaches our templates. Helpers
// and partials are passed per render call, which keeps renders independent.
const env = Handlebars.create();
for (const name of Object.keys(env.helpers)) env.unregisterHelper(name);
for (const name of Object.keys(env.partials)) env.unregisterPartial(name);
for (const name of Object.keys(env.decorators)) env.unregisterDecorator(name);

/** Parses template text into an AST (standalone lines and `~` whitespace control applied). */
export function parseTemplateText(text: string): HbsProgram {
  return env.parse(text) as unknown as HbsProgram;
}

/** Compiles a checked AST eagerly, so compiler errors surface at parse time. */
export function compileChecked(ast: HbsProgram): CompiledTemplate {
  const internals = env as unknown as CompilerInternals;
  // Same steps as Handlebars.compile's lazy compileInput(), done now instead of on first use.
  const options = { ...COMPILE_OPTIONS };
  const environment = new internals.Compiler().compile(ast, options);
  const spec = new internals.JavaScriptCompiler().compile(environment, options, undefined, true);
  return internals.template(spec);
}

/** Handlebars.createFrame, for the counting `each`. */
export function createFrame(data: unknown): Record<string, unknown> {
  return Handlebars.createFrame(data) as Record<string, unknown>;
}

/** The jison parser behind Handlebars.parse, for locating syntax errors. */
export function handlebarsParser(): unknown {
  return (Handlebars as unknown as { Parser: unknown }).Parser;
}
