import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, wrap } from "node:module";
import { basename, dirname, join } from "node:path";
import { constants, Script } from "node:vm";
import type { ScriptOptions } from "node:vm";

/*
 * The `pod` bin's V8 code cache (issue 15). Node 20 has no compile cache of its own
 * (`module.enableCompileCache` arrived in Node 22.1), so the launcher compiles the bundled
 * CommonJS files itself with `vm.Script` and hands V8 the code it compiled on an earlier run.
 * A cache hit skips parsing and compiling every function that run compiled.
 *
 * - One file per bundle file, named by the bundle's content id (fixed at build time), the Node
 *   version and the architecture, so a rebuilt or reinstalled bin never reads another's cache.
 *   V8 checks the rest (its version and flags) and rejects data that does not fit: the file is
 *   then compiled from source and the cache rewritten.
 * - Written at exit by the first run that loads the file (so it holds the functions that run
 *   used), and again when V8 rejected it. Third-party code the bin loads on first use (yaml,
 *   valibot, Handlebars' parser, the AI SDK providers, pg, the tokenizer) is bundled into files
 *   of its own, so each gets its entry when a command first needs it.
 * - Best effort: a cache that cannot be read or written changes nothing but speed, and nothing
 *   is printed. The directory is the user's own (mode 0700), like Node 22's compile cache.
 */

/** Where the cache lives, or `undefined` when it is off. */
export function compileCacheDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  // Node's own switches: NODE_DISABLE_COMPILE_CACHE turns it off, NODE_COMPILE_CACHE moves it.
  if (nonEmpty(env.NODE_DISABLE_COMPILE_CACHE) !== undefined) return undefined;
  const nodeDir = nonEmpty(env.NODE_COMPILE_CACHE);
  if (nodeDir !== undefined) return join(nodeDir, "insomnia-pod");
  const xdg = nonEmpty(env.XDG_CACHE_HOME);
  if (xdg !== undefined) return join(xdg, "insomnia", "compile-cache");
  const home = nonEmpty(env.HOME);
  return home === undefined ? undefined : join(home, ".cache", "insomnia", "compile-cache");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

const MAGIC = 0x31_43_44_50; // "PDC1", little endian
const HEADER_BYTES = 4;

interface Pending {
  readonly script: Script;
  readonly cacheFile: string;
}

/** What the build records of each bundle file, by its name relative to the bundle's directory. */
export interface BundleFile {
  /** The file's content id: the key of its cache entries. */
  readonly id: string;
  /** The file is all ASCII (then it is read as latin1: exact, and no UTF-8 decoding). */
  readonly ascii: boolean;
  /** The file's text has `import(` (the build strips comments, so it is code): it gets Node's module loader. */
  readonly dynamicImport: boolean;
}

/** The cache of one process: reads entries as files are loaded and writes them at exit. */
export class CompileCache {
  readonly #dir: string;
  readonly #variants: Readonly<Record<string, string>>;
  readonly #pending: Pending[] = [];

  /**
   * `variants`: a file whose entry is kept per variant (the bin's own bundle, per command: an
   * entry holds what its first run compiled, so the one of `pod --help` must not serve
   * `pod prompt`).
   */
  constructor(dir: string, variants: Readonly<Record<string, string>> = {}) {
    this.#dir = dir;
    this.#variants = variants;
  }

  /** Compiles `source` (the wrapped text of bundle file `name`, described by `known`) with its cached code, if any. */
  compile(name: string, known: BundleFile, file: string, source: string): Script {
    const variant = Object.hasOwn(this.#variants, name) ? `-${this.#variants[name]}` : "";
    const cacheFile = join(
      this.#dir,
      `${basename(name).replace(/\W/g, "_")}${variant.replace(/[^\w-]/g, "_")}-${known.id}-${process.version}-${process.arch}.bin`,
    );
    const entry = readEntry(cacheFile);
    const script = new Script(source, scriptOptions(file, known.dynamicImport, entry?.data));
    if (entry === undefined || script.cachedDataRejected === true) this.#pending.push({ script, cacheFile });
    return script;
  }

  /** Writes the entries that were missing or rejected, with what this run compiled. */
  flush(): void {
    for (const { script, cacheFile } of this.#pending.splice(0)) {
      let data: Buffer;
      try {
        data = script.createCachedData();
      } catch {
        continue; // this runs at exit: nothing may throw
      }
      writeEntry(this.#dir, cacheFile, data);
    }
  }
}

/**
 * How a bundle file is compiled. Only a file whose text has `import(` gets Node's module loader
 * for it (loading that loader costs a start that never imports anything).
 */
function scriptOptions(file: string, dynamicImport: boolean, cachedData?: Buffer): ScriptOptions {
  const options: ScriptOptions = { filename: file };
  if (dynamicImport) options.importModuleDynamically = constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (cachedData !== undefined) options.cachedData = cachedData;
  return options;
}

function readEntry(file: string): { data: Buffer } | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  if (bytes.length <= HEADER_BYTES || bytes.readUInt32LE(0) !== MAGIC) return undefined;
  return { data: bytes.subarray(HEADER_BYTES) };
}

function writeEntry(dir: string, file: string, data: Buffer): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(MAGIC, 0);
    writeFileSync(temp, Buffer.concat([header, data]), { mode: 0o600 });
    // Atomic: a concurrent run reads the old entry or the new one, never half of one.
    renameSync(temp, file);
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // nothing was written
    }
  }
}

/** The `module` object a bundled CommonJS file gets. */
interface CommonJsModule {
  exports: unknown;
  readonly id: string;
  readonly filename: string;
  loaded: boolean;
}

/**
 * Loads bundled CommonJS files through the cache. A file's `require("./vendor/…")` loads that
 * bundle file the same way (once); anything else (Node's builtins) goes to Node's `require`.
 */
export class BundleLoader {
  readonly #root: string;
  readonly #files: Readonly<Record<string, BundleFile>>;
  readonly #cache: CompileCache | undefined;
  readonly #modules = new Map<string, CommonJsModule>();

  /** `root`: the directory of the bundle files; a file not in `files` is loaded without the cache. */
  constructor(root: string, files: Readonly<Record<string, BundleFile>>, cache: CompileCache | undefined) {
    this.#root = root;
    this.#files = files;
    this.#cache = cache;
  }

  /** Runs the bundle file `name` (relative to the root) once and returns its exports. */
  load(name: string): unknown {
    const file = join(this.#root, name);
    const loaded = this.#modules.get(file);
    if (loaded !== undefined) return loaded.exports;
    const known = Object.hasOwn(this.#files, name) ? this.#files[name] : undefined;
    const source = wrap(readFileSync(file, known?.ascii === true ? "latin1" : "utf8"));
    const script =
      known === undefined || this.#cache === undefined
        ? new Script(source, scriptOptions(file, known?.dynamicImport ?? true))
        : this.#cache.compile(name, known, file, source);
    const module: CommonJsModule = { exports: {}, id: file, filename: file, loaded: false };
    this.#modules.set(file, module);
    const nodeRequire = createRequire(file);
    const bundleRequire = Object.assign(
      (id: string): unknown => (id.startsWith("./vendor/") ? this.load(id.slice(2)) : nodeRequire(id)),
      { resolve: nodeRequire.resolve, cache: nodeRequire.cache, main: undefined },
    );
    const run = script.runInThisContext() as (...args: unknown[]) => void;
    run.call(module.exports, module.exports, bundleRequire, module, file, dirname(file));
    module.loaded = true;
    return module.exports;
  }
}
