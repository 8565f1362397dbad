import { type ErrorLocation, errorText } from "@insomnia/errors";
import { parseRef, type LoadedPrompt, type PromptLoader, type PromptRef } from "@insomnia/prompt-loader";
import { checkTemplateProblems, type IncludeSite } from "./check-template.ts";
import type { HbsProgram } from "./handlebars-ast.ts";
import { compileRenderer, type RenderRuntime } from "./compile-renderer.ts";
import { loadHandlebarsParser, parseTemplateText, parseTokens } from "./handlebars-parser.ts";
import { countLeafStatements, scanBeforeParsing } from "./pre-parse-scan.ts";
import { isPrebuilt, prebuiltAst } from "./prebuilt-asts.ts";
import { type RenderContext, type RenderData, RenderDataMemo } from "./render-data.ts";
import { RECOUNT_IN_BYTES, RenderBudget, type BudgetLimits } from "./render-budget.ts";
import { describeSyntaxError } from "./syntax-error.ts";
import { locateCrossing } from "./expansion-crossing.ts";
import { MAX_NESTING_DEPTH } from "./nesting-depth.ts";
import { SystemPromptError, withProblems } from "./system-prompt-error.ts";
import { cachedFile, cacheGet, cacheSet, type CachedFile } from "./template-cache.ts";
import { assembleSystemPrompt } from "./trailing-section.ts";

/** Limits checked while parsing. */
export interface ParseOptions {
  /** Deepest include nesting: the root is level 0. Default 16. */
  maxIncludeDepth?: number | undefined;
  /** Distinct files, the root included. Default 256. */
  maxIncludes?: number | undefined;
  /** Statements after every include is expanded in place (loops count once). Default 100 000. */
  maxExpandedNodes?: number | undefined;
  /** Statements in any one file; bounds the parse time and memory of one file. Default 10 000. */
  maxFileStatements?: number | undefined;
  /**
   * Where the instruction's reference was written (a manifest's `worker.instruction` line):
   * an instruction that cannot be loaded is reported there, since no template line exists yet.
   */
  instructionAt?: ErrorLocation | undefined;
}

/** Limits checked while rendering. */
export interface RenderOptions {
  /** UTF-8 bytes of the rendered instruction (the trailing section is not counted). Default 1 MiB; at most 2^29 − 24. */
  maxOutputBytes?: number | undefined;
  /** Block helper calls + `#each` iterations + include calls + `join` calls. Default 200 000. */
  maxSteps?: number | undefined;
}

/** One file that went into a template. */
export interface TemplateSource {
  /** Canonical reference, e.g. "$workspace/team/review". */
  readonly ref: string;
  /** Real path of the file read. */
  readonly file: string;
  /** Hex SHA-256 of the file's (normalized) text. */
  readonly sha256: string;
}

/** The part of PromptLoader a template needs. */
export type TemplateLoader = Pick<PromptLoader, "load">;

/** Default limits. */
export const DEFAULT_LIMITS: Readonly<{
  maxIncludeDepth: 16;
  maxIncludes: 256;
  maxExpandedNodes: 100000;
  maxFileStatements: 10000;
  maxOutputBytes: number;
  maxSteps: 200000;
}> = Object.freeze({
  maxIncludeDepth: 16,
  maxIncludes: 256,
  maxExpandedNodes: 100_000,
  maxFileStatements: 10_000,
  maxOutputBytes: 1024 * 1024,
  maxSteps: 200_000,
});

/** V8's longest string (String::kMaxLength on 64-bit), in UTF-16 code units. */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

interface LoadedFile {
  readonly ref: string;
  readonly file: string;
  readonly loaded: LoadedPrompt;
  readonly cached: CachedFile;
}

/** A file while the tree is loaded: a leaf counted but not yet parsed has no `cached` yet. */
interface LoadingFile {
  readonly ref: string;
  readonly file: string;
  readonly loaded: LoadedPrompt;
  cached: CachedFile | undefined;
}

/** A leaf whose parse found another statement count than its lexer's: the tree is loaded again without deferring. */
const COUNTS_DIFFER = Symbol("counts differ");

function limit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative number, got ${String(value)}`);
  }
  return value;
}

/** A checked instruction with everything it includes, ready to render any number of times. */
export class SystemPromptTemplate {
  /** Canonical ref of the root file. */
  readonly instruction: string;
  /** Every file that went into the template: root first, then depth-first in document order, each once. */
  readonly sources: readonly TemplateSource[];
  readonly #files: ReadonlyMap<string, LoadedFile>;
  #state: RenderState | undefined;

  private constructor(instruction: string, files: ReadonlyMap<string, LoadedFile>) {
    this.instruction = instruction;
    this.#files = files;
    this.sources = Object.freeze(
      [...files.values()].map(({ ref, file, loaded }) =>
        // The hash is computed when first read: rendering never needs it.
        Object.freeze(
          Object.defineProperties({ ref, file } as TemplateSource, {
            sha256: { get: () => loaded.sha256, enumerable: true },
          }),
        ),
      ),
    );
  }

  /** Loads, checks and compiles the instruction and all its includes. Throws SystemPromptError (phase "parse"). */
  static async parse(
    instruction: string,
    loader: TemplateLoader,
    options: ParseOptions = {},
  ): Promise<SystemPromptTemplate> {
    try {
      return await SystemPromptTemplate.#parse(instruction, loader, options, true);
    } catch (error) {
      if (error !== COUNTS_DIFFER) throw error;
      // Never seen: a safety net that keeps every answer what parsing each file at once gives.
      return await SystemPromptTemplate.#parse(instruction, loader, options, false);
    }
  }

  static async #parse(
    instruction: string,
    loader: TemplateLoader,
    options: ParseOptions,
    deferLeaves: boolean,
  ): Promise<SystemPromptTemplate> {
    const maxIncludeDepth = limit(options.maxIncludeDepth, DEFAULT_LIMITS.maxIncludeDepth, "maxIncludeDepth");
    const maxIncludes = limit(options.maxIncludes, DEFAULT_LIMITS.maxIncludes, "maxIncludes");
    const maxExpandedNodes = limit(options.maxExpandedNodes, DEFAULT_LIMITS.maxExpandedNodes, "maxExpandedNodes");
    const maxFileStatements = limit(options.maxFileStatements, DEFAULT_LIMITS.maxFileStatements, "maxFileStatements");

    let rootRef: PromptRef;
    try {
      rootRef = parseRef(instruction);
    } catch (cause) {
      throw new SystemPromptError("INCLUDE_FAILED", `cannot load instruction "${instruction}": ${errorText(cause)}`, {
        ...(options.instructionAt ?? { ref: instruction }),
        cause,
      });
    }
    const files = new Map<string, LoadingFile>();

    const load = async (
      ref: PromptRef,
      chain: readonly string[],
      from?: { file: { readonly ref: string; readonly file: string }; site: IncludeSite },
    ) => {
      let loaded: Awaited<ReturnType<TemplateLoader["load"]>>;
      try {
        loaded = await loader.load(ref);
      } catch (cause) {
        const what = from === undefined ? "instruction" : "include";
        const why = errorText(cause);
        const detail = `cannot load ${what}${why.includes(ref.canonical) ? "" : ` ${ref.canonical}`}: ${why}`;
        throw new SystemPromptError(
          "INCLUDE_FAILED",
          detail,
          from === undefined
            ? { ...(options.instructionAt ?? { ref: ref.canonical }), chain, cause }
            : {
                ref: from.file.ref,
                file: from.file.file,
                line: from.site.line,
                column: from.site.column,
                chain: chain.slice(0, -1),
                cause,
              },
        );
      }
      // Lexing and parsing need Handlebars' parser: loaded here, once, for the first text that is not prebuilt.
      if (!isPrebuilt(loaded.text)) await loadHandlebarsParser();
      return loaded;
    };

    // Statements so far with every include expanded in place, in document order: the count
    // crosses maxExpandedNodes while the tree is loaded, so a tree too large fails after
    // loading no more than the files up to where it crosses (issue 27).
    let expandedCount = 0;
    /** Expanded statements of each file whose includes are all loaded. */
    const expandedOf = new Map<string, number>();
    const overLimit = (entry: LoadedFile, chain: readonly string[], at: { line?: number; column?: number }) =>
      new SystemPromptError(
        "EXPANSION_TOO_LARGE",
        `with every include expanded the instruction has more than ${maxExpandedNodes} statements (${expandedCount} counted up to here), over the limit of ${maxExpandedNodes}; ` +
          "this is where the count crosses it — includes repeated inside included files multiply, include each file fewer times",
        { ref: entry.ref, file: entry.file, line: at.line, column: at.column, chain },
      );

    const maxNodes = Math.min(maxExpandedNodes, maxFileStatements);

    /**
     * Parses, checks and compiles the leaves a frame counted but deferred, in the order they
     * were included. A frame does this before anything but counting could fail (an include
     * that does not load, a cycle, a file that must be parsed now, its own end), inside its
     * `try`, so a leaf's problem is reported as if the leaf had been parsed where it was
     * included; only the expansion cap is checked before them (issue 27: a tree too large
     * fails after lexing, not parsing, its files).
     */
    const compileLeaves = (leaves: { entry: LoadingFile; chain: readonly string[]; statements: number }[]) => {
      for (const leaf of leaves.splice(0)) {
        const compiled = compileFile(leaf.entry.loaded, leaf.chain, maxNodes);
        if ("problems" in compiled) {
          const all = [...compiled.problems].sort(
            (a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
          );
          throw withProblems(all[0] as SystemPromptError, all);
        }
        if (compiled.ownNodes !== leaf.statements || compiled.includes.length > 0) throw COUNTS_DIFFER;
        cacheSet(leaf.entry.ref, leaf.entry.loaded.text, compiled);
        leaf.entry.cached = compiled;
      }
    };

    const visit = async (
      loaded: Awaited<ReturnType<TemplateLoader["load"]>>,
      chain: readonly string[],
      parent:
        | { leaves: { entry: LoadingFile; chain: readonly string[]; statements: number }[]; compile(): void }
        | undefined,
    ) => {
      const canonical = loaded.ref.canonical;
      const file = loaded.file;
      let cached = cacheGet(canonical, loaded.text);
      // The root has no parent to defer to: it is parsed at once.
      if (cached === undefined && parent !== undefined && deferLeaves && prebuiltAst(loaded.text) === undefined) {
        const statements = countLeafStatements(loaded.text, maxNodes);
        if (statements !== undefined) {
          // A leaf: its expansion is its own statements; it is parsed once the parent needs it.
          const entry: LoadingFile = { ref: canonical, file, loaded, cached: undefined };
          files.set(canonical, entry);
          parent.leaves.push({ entry, chain, statements });
          expandedCount += statements;
          expandedOf.set(canonical, statements);
          return;
        }
      }
      if (cached === undefined || cached.includes.length > 0) parent?.compile();
      if (cached === undefined) {
        const compiled = compileFile(loaded, chain, maxNodes);
        if ("problems" in compiled) {
          // The file's includes are loaded anyway, so a missing one is reported in the same
          // run as the file's own problems (not only after those are fixed).
          const failed: SystemPromptError[] = [];
          let tried = 0;
          for (const site of compiled.includes) {
            if (chain.includes(site.target) || files.has(site.target)) continue;
            if (files.size + tried++ >= maxIncludes) break;
            try {
              await load(parseRef(site.target), [...chain, site.target], { file: { ref: canonical, file }, site });
            } catch (error) {
              if (!SystemPromptError.is(error)) throw error;
              failed.push(error);
            }
          }
          const all = [...compiled.problems, ...failed].sort(
            (a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0),
          );
          throw withProblems(all[0] as SystemPromptError, all);
        }
        cached = compiled;
        cacheSet(canonical, loaded.text, cached);
      }
      const own = cached;
      const entry: LoadedFile = { ref: canonical, file, loaded, cached: own };
      files.set(canonical, entry);

      // This file's own expansion is expandedCount - base; when it crosses the cap here,
      // the place is in this file (an include whose own expansion crossed it threw inside).
      const base = expandedCount;
      let counted = 0;
      const crossed = () => expandedCount - base > maxExpandedNodes;
      const crossedAmongOwnStatements = () =>
        overLimit(entry, chain, locateCrossing(loaded.text, own.includes, expandedOf, maxExpandedNodes));
      const frame = {
        leaves: [] as { entry: LoadingFile; chain: readonly string[]; statements: number }[],
        compile: () => compileLeaves(frame.leaves),
      };

      // An include that fails to load is reported and the next one is tried; any other problem ends the parse.
      const failed: SystemPromptError[] = [];
      try {
        for (const site of own.includes) {
          expandedCount += site.ordinal - 1 - counted;
          counted = site.ordinal;
          if (crossed()) throw crossedAmongOwnStatements();
          expandedCount += 1;
          const at = { ref: canonical, file, line: site.line, column: site.column, chain };
          if (chain.includes(site.target)) {
            frame.compile();
            throw new SystemPromptError(
              "CYCLE",
              `include cycle: ${[...chain, site.target].join(" -> ")}; remove one of these includes`,
              at,
            );
          }
          if (chain.length > maxIncludeDepth) {
            frame.compile();
            throw new SystemPromptError(
              "TOO_DEEP",
              `includes nest more than ${maxIncludeDepth} levels deep (${[...chain, site.target].join(" -> ")}); flatten the includes`,
              at,
            );
          }
          if (files.has(site.target)) {
            // Loaded before and not on the chain, so its includes are all loaded too.
            expandedCount += expandedOf.get(site.target) ?? 0;
          } else {
            if (files.size >= maxIncludes) {
              frame.compile();
              throw new SystemPromptError(
                "TOO_MANY_INCLUDES",
                `the instruction includes more than ${maxIncludes} distinct files; including ${site.target} goes over the limit`,
                at,
              );
            }
            const childChain = [...chain, site.target];
            let child: Awaited<ReturnType<typeof load>> | undefined;
            try {
              child = await load(parseRef(site.target), childChain, { file: entry, site });
            } catch (error) {
              if (!SystemPromptError.is(error)) throw error;
              frame.compile();
              failed.push(error);
            }
            if (child !== undefined) await visit(child, childChain, frame);
          }
          if (crossed()) throw overLimit(entry, chain, site);
        }
        expandedCount += own.ownNodes - counted;
        if (crossed()) throw crossedAmongOwnStatements();
        frame.compile();
      } catch (error) {
        const [first] = failed;
        if (first === undefined || !SystemPromptError.is(error)) throw error;
        throw withProblems(first, [...failed, error]);
      }
      expandedOf.set(canonical, expandedCount - base);
      const [first] = failed;
      if (first !== undefined) throw withProblems(first, failed);
    };

    await visit(await load(rootRef, [rootRef.canonical]), [rootRef.canonical], undefined);
    const parsed = new Map<string, LoadedFile>();
    for (const [ref, entry] of files) {
      if (entry.cached === undefined) throw new Error(`internal error: ${ref} was counted but never parsed`);
      parsed.set(ref, { ...entry, cached: entry.cached });
    }
    checkDepth(rootRef.canonical, parsed, maxIncludeDepth);
    return new SystemPromptTemplate(rootRef.canonical, parsed);
  }

  /** Renders instruction + trailing section. Throws SystemPromptError (phase "render"). */
  render(ctx: RenderContext, options: RenderOptions = {}): string {
    const instruction = this.renderInstruction(ctx, options);
    return assembleSystemPrompt({ instruction, scopeSummary: ctx.scope.summary, agentsMd: ctx.agentsMd });
  }

  /** Renders only the instruction part (no trailing section). Throws SystemPromptError (phase "render"). */
  renderInstruction(ctx: RenderContext, options: RenderOptions = {}): string {
    const limits: BudgetLimits = {
      // No cap above the longest string V8 holds: past it a render would fail with a RangeError.
      maxOutputBytes: Math.min(
        limit(options.maxOutputBytes, DEFAULT_LIMITS.maxOutputBytes, "maxOutputBytes"),
        MAX_STRING_LENGTH,
      ),
      maxSteps: limit(options.maxSteps, DEFAULT_LIMITS.maxSteps, "maxSteps"),
    };
    const root = this.#files.get(this.instruction);
    if (root === undefined)
      throw new SystemPromptError("RENDER_FAILED", "the template has no root file", { ref: this.instruction });
    // Render never calls back into caller code, so it cannot re-enter itself; the check
    // keeps it correct should that ever change, by giving the inner render its own state.
    let state = this.#state;
    if (state === undefined || state.busy) {
      state = createRenderState(this.instruction, this.#files);
      this.#state ??= state;
    }
    const data = state.data.build(ctx);
    state.busy = true;
    try {
      try {
        return renderWith(state, root, data, limits, false);
      } catch (error) {
        if (error !== RECOUNT_IN_BYTES) throw error;
        return renderWith(state, root, data, limits, true);
      }
    } finally {
      state.busy = false;
    }
  }
}

/** What one render uses besides the data: a budget reset per render, and the runtime the compiled files render with. */
interface RenderState {
  busy: boolean;
  /** The data of the last render, reused while the context is equal. */
  readonly data: RenderDataMemo;
  readonly budget: RenderBudget;
  readonly runtime: { root: RenderData | undefined } & RenderRuntime;
  readonly files: ReadonlyMap<string, LoadedFile>;
}

function createRenderState(instruction: string, files: ReadonlyMap<string, LoadedFile>): RenderState {
  const budget = new RenderBudget(
    { maxOutputBytes: DEFAULT_LIMITS.maxOutputBytes, maxSteps: DEFAULT_LIMITS.maxSteps },
    instruction,
    (ref) => files.get(ref)?.file,
  );
  const runtime = {
    budget,
    root: undefined as RenderData | undefined,
    include(target: string): string {
      const file = files.get(target);
      if (file === undefined) throw new Error(`internal error: ${target} was included but not loaded`);
      return file.cached.render(runtime);
    },
  };
  return { busy: false, data: new RenderDataMemo(), budget, runtime, files };
}

function renderWith(
  state: RenderState,
  root: LoadedFile,
  data: RenderData,
  limits: BudgetLimits,
  inBytes: boolean,
): string {
  const { budget, runtime } = state;
  budget.reset(limits, inBytes);
  runtime.root = data;
  try {
    return root.cached.render(runtime);
  } catch (cause) {
    if (cause === RECOUNT_IN_BYTES || SystemPromptError.is(cause)) throw cause;
    const ref = budget.current;
    throw new SystemPromptError("RENDER_FAILED", `rendering failed: ${errorText(cause)}`, {
      ref,
      file: state.files.get(ref)?.file,
      chain: budget.chain(),
      cause,
    });
  } finally {
    runtime.root = undefined;
  }
}

/** The checker's problems with the includes it resolved, for the caller to try loading. */
interface FileProblems {
  readonly problems: readonly SystemPromptError[];
  readonly includes: readonly IncludeSite[];
}

function compileFile(loaded: LoadedPrompt, chain: readonly string[], maxNodes: number): CachedFile | FileProblems {
  const { text, ref, file } = loaded;
  const where = { ref: ref.canonical, file, chain };
  const scan = scanBeforeParsing(text, maxNodes);
  if (scan.tooDeep !== undefined) {
    throw new SystemPromptError(
      "TOO_DEEP",
      `blocks nest more than ${MAX_NESTING_DEPTH} levels deep here; flatten them or move a part into its own file`,
      { ...where, line: scan.tooDeep.line, column: scan.tooDeep.column },
    );
  }
  // The per-file statement cap before parsing: Handlebars' parser (and, for a file that
  // does not parse, the error locator) costs far more per statement than counting tokens
  // does, and the count stops one statement past the cap.
  if (scan.tooManyStatements) {
    throw new SystemPromptError(
      "EXPANSION_TOO_LARGE",
      `this file alone has more than ${maxNodes} statements, over the per-file limit of ${maxNodes}; split it into several files or shorten it`,
      { ...where, line: 1, column: 1 },
    );
  }
  let ast: HbsProgram;
  try {
    ast = prebuiltAst(text) ?? (scan.tokens === undefined ? parseTemplateText(text) : parseTokens(text, scan.tokens));
  } catch (cause) {
    const info = describeSyntaxError(text, cause, scan.tokens);
    throw new SystemPromptError("SYNTAX", `syntax error: ${info.message}`, {
      ...where,
      line: info.line,
      column: info.column,
      cause,
    });
  }
  const { checked, problems } = checkTemplateProblems(ast, where, (name) => parseRef(name, ref).canonical);
  if (problems.length > 0) return { problems, includes: checked.includes };
  if (checked.ownNodes > maxNodes) {
    // Compiling and rendering grow with the statements; refuse before paying for them.
    throw new SystemPromptError(
      "EXPANSION_TOO_LARGE",
      `this file alone has ${checked.ownNodes} statements, over the per-file limit of ${maxNodes}; split it into several files or shorten it`,
      { ...where, line: 1, column: 1 },
    );
  }
  try {
    return cachedFile(text, checked, compileRenderer(checked.ast, ref.canonical, checked.includes));
  } catch (cause) {
    // Only a checker bug can get here: the renderer compiles every construct the checker accepts.
    throw new SystemPromptError(
      "SYNTAX",
      `cannot compile the checked template: ${errorText(cause)}; please report this`,
      { ...where, cause },
    );
  }
}

/**
 * Include depth along every path, not only the one each file was first loaded through:
 * a file loaded shallow can also be included deep, and its own includes then nest deeper.
 */
function checkDepth(root: string, files: ReadonlyMap<string, LoadedFile>, max: number): void {
  const memo = new Map<string, number>();
  const height = (ref: string): number => {
    const known = memo.get(ref);
    if (known !== undefined) return known;
    let h = 0;
    for (const site of files.get(ref)?.cached.includes ?? []) h = Math.max(h, 1 + height(site.target));
    memo.set(ref, h);
    return h;
  };
  let chain = [root];
  for (;;) {
    const ref = chain.at(-1) ?? root;
    const file = files.get(ref);
    const depth = chain.length - 1;
    const deeper = file?.cached.includes.find((site) => depth + 1 + height(site.target) > max);
    if (file === undefined || deeper === undefined) return;
    if (depth + 1 > max) {
      throw new SystemPromptError(
        "TOO_DEEP",
        `includes nest more than ${max} levels deep (${[...chain, deeper.target].join(" -> ")}); flatten the includes`,
        { ref, file: file.file, line: deeper.line, column: deeper.column, chain },
      );
    }
    chain = [...chain, deeper.target];
  }
}
