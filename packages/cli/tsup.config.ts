import { createHash } from "node:crypto";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { cp, readFile, writeFile } from "node:fs/promises";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Options } from "tsup";
import { baseConfig } from "../../tsup.base.ts";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/*
 * The `pod` bin is CommonJS bundles run through a V8 code cache
 * (src/compile-cache.ts): Node 20 caches no compiled code itself, and a CommonJS file loads
 * with less work than ES modules. The library entry (dist/index.js) is
 * plain ESM built by tsdown (tsdown.config.ts), like every other package.
 *
 * - dist/bin.cjs: the launcher (src/bin.ts); loads dist/pod.cjs through the cache.
 * - dist/pod.cjs (src/pod.ts): the CLI and our packages, inlined and tree-shaken. Commands are `import()`ed
 *   by main.ts, so each is evaluated only when it runs.
 * - dist/vendor/<name>.cjs: each third-party package the bin loads on first use (VENDORS), one
 *   self-contained file each, loaded by a `require("./vendor/<name>.cjs")` in place of the
 *   package, so a command reads and compiles only what it uses and each file has its own
 *   cache entry. A package several vendors import (a `shared` vendor: zod, for the AI SDK) is a
 *   file of its own, so a run loads and initializes one copy, as Node does from node_modules.
 * - Data files our libraries read beside their own code (DATA_FILES) are copied beside the bundle.
 *
 * Our libraries' code is bundled as published: nothing in it is rewritten.
 */

/** The data files our libraries read beside their module (`new URL(..., import.meta.url)`), relative to this package. */
const DATA_FILES = [
  // @insomnia/template: the builtin prompts' prebuilt ASTs.
  { from: "../template/dist/prebuilt-asts.json", to: "prebuilt-asts.json" },
  // @insomnia/prompt-loader: the builtin prompts, looked for beside its module first.
  { from: "../prompt-loader/prompts", to: "prompts" },
];

async function copyDataFiles(outDir: string): Promise<void> {
  for (const file of DATA_FILES) {
    await cp(join(HERE, file.from), join(outDir, file.to), { recursive: true, dereference: true });
  }
}

interface Vendor {
  /** The file: dist/vendor/<name>.cjs. */
  readonly name: string;
  /** What our code imports or requires. */
  readonly specifier: string;
  /** The workspace package that depends on it (where it resolves), relative to this one. */
  readonly from: string;
  /** Which of the package's builds is bundled: its CommonJS one, or its ES modules (tree-shaken). */
  readonly build: "require" | "import";
  /**
   * Imported statically by a library that most commands evaluate without using it (yaml and
   * valibot: only a manifest layer or skill needs them): the file is read when one of its
   * exports is first used, not when the importing module is evaluated.
   */
  readonly onFirstUse?: true;
  /**
   * A package other vendors import: `entries`, the specifiers they import it by (each one export
   * of the file), are shared with the files whose path matches `by`.
   */
  readonly shared?: { readonly entries: readonly string[]; readonly by: RegExp };
}

const VENDORS: readonly Vendor[] = [
  { name: "yaml", specifier: "yaml", from: "../safe-yaml", build: "require", onFirstUse: true },
  { name: "valibot", specifier: "valibot", from: "../manifest", build: "require", onFirstUse: true },
  // Imported by @insomnia/template with a dynamic import() when a text that is not prebuilt is parsed.
  {
    name: "handlebars-parser",
    specifier: "handlebars/dist/cjs/handlebars/compiler/base.js",
    from: "../template",
    build: "require",
  },
  // The AI SDK's streamText/generateText: read only by `pod run`, like the providers.
  { name: "ai", specifier: "ai", from: "../ai-sdk", build: "import" },
  { name: "anthropic", specifier: "@ai-sdk/anthropic", from: ".", build: "import" },
  { name: "openai", specifier: "@ai-sdk/openai", from: ".", build: "import" },
  { name: "openai-compatible", specifier: "@ai-sdk/openai-compatible", from: ".", build: "import" },
  { name: "pg", specifier: "pg", from: "../segment-store-postgres", build: "require" },
  // @insomnia/mcp with the MCP SDK (and its zod, ajv): loaded only when a manifest declares servers.
  { name: "mcp", specifier: "@insomnia/mcp", from: ".", build: "import" },
  { name: "o200k-base", specifier: "gpt-tokenizer/encoding/o200k_base", from: ".", build: "require" },
  { name: "undici", specifier: "undici", from: ".", build: "require" },
  // The OpenTelemetry SDK and OTLP exporters (src/otlp-sdk.ts): loaded only when an OTLP endpoint is set.
  { name: "otlp", specifier: "./otlp-sdk.ts", from: "./src", build: "require" },
  // Imported by ai and each provider: one copy for all of them. The MCP SDK keeps its own, tree-shaken
  // to the part it uses, because `pod prompt` and `pod check` load it when a manifest declares servers.
  {
    name: "zod",
    specifier: "zod",
    from: "../ai-sdk",
    build: "import",
    shared: { entries: ["zod", "zod/v3", "zod/v4"], by: /\/node_modules\/(?:ai|@ai-sdk\/[^/]+)\// },
  },
];

const HERE = dirname(fileURLToPath(import.meta.url));

/** Where the entry files of `build: "import"` vendors are generated, in the package using each. */
const GENERATED_ENTRIES = join("node_modules", ".cache", "pod-vendor-entries");

/**
 * Each vendor's entry: its CommonJS file as Node resolves it from the package using it, or a
 * generated `export * from "<specifier>"` there, so that esbuild resolves its ES modules.
 */
function vendorEntries(): Record<string, string> {
  return Object.fromEntries(
    VENDORS.map((vendor) => {
      const from = join(HERE, vendor.from);
      if (vendor.build === "require") {
        return [`vendor/${vendor.name}`, createRequire(join(from, "package.json")).resolve(vendor.specifier)];
      }
      const entry = join(from, GENERATED_ENTRIES, `${vendor.name}.mjs`);
      mkdirSync(dirname(entry), { recursive: true });
      // A shared vendor exports each entry's namespace under the entry's name.
      const entries = vendor.shared?.entries.map(
        (each) => `export * as ${JSON.stringify(each)} from ${JSON.stringify(each)};`,
      );
      writeFileSync(entry, `${entries?.join("\n") ?? `export * from ${JSON.stringify(vendor.specifier)};`}\n`);
      return [`vendor/${vendor.name}`, entry];
    }),
  );
}

/** Where a shared vendor is built from: its package's real directory. */
function sharedRoot(vendor: Vendor): string {
  const pkg = createRequire(join(HERE, vendor.from, "package.json")).resolve(`${vendor.specifier}/package.json`);
  return realpathSync(dirname(pkg)) + sep;
}

/** In a lazy module's path, what follows SHARED_EXPORT is the export of the shared vendor file. */
const SHARED_EXPORT = "#";

/**
 * The CommonJS module an ES module's import of `specifier` resolves to: the module itself, one
 * export of a shared vendor file, or for an `onFirstUse` vendor an object inheriting from a
 * proxy that requires its file on first use.
 */
function lazyRequireModule(path: string): string {
  const [specifier = path, exported] = path.split(SHARED_EXPORT);
  const required = `require(${JSON.stringify(specifier)})`;
  // No own properties (here and below), so esbuild's __toESM copies none: reads go to the prototype.
  if (exported !== undefined) return `module.exports = { __proto__: ${required}[${JSON.stringify(exported)}] };`;
  const vendor = VENDORS.find((each) => `./vendor/${each.name}.cjs` === specifier);
  if (vendor?.onFirstUse === true) {
    // Each read goes to the file, required once.
    const load = `let loaded; const load = () => (loaded ??= ${required});`;
    return `${load}\nmodule.exports = { __proto__: new Proxy({}, { get: (_, key) => load()[key] }) };`;
  }
  return `module.exports = ${required};`;
}

/**
 * Our code's imports of a vendor become `require("./vendor/<name>.cjs")`, and every import of a
 * vendor or a Node builtin from ES module code is made lazy. esbuild turns an ES module's
 * import of an external into a `require` at the top of the CommonJS output, which would load
 * every vendor and builtin any command uses at every start. Each such import instead resolves
 * to a small CommonJS module (lazyRequireModule), which esbuild evaluates when the importing
 * module is (a command's modules only when the command runs).
 */
function vendorFiles(): Plugin {
  const unshared = VENDORS.filter((vendor) => vendor.shared === undefined);
  const bySpecifier = new Map(unshared.map((vendor) => [vendor.specifier, `./vendor/${vendor.name}.cjs`]));
  const shared = VENDORS.flatMap((vendor) =>
    vendor.shared === undefined ? [] : [{ ...vendor.shared, vendor, root: sharedRoot(vendor) }],
  );
  const checking = Symbol("checking the copy a shared package resolves to");
  return {
    name: "insomnia-vendor-files",
    setup(build) {
      // An import of a package shared with the importer: one export of its file, when it is the same copy.
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        const { path, importer } = args;
        const owner = shared.find(
          ({ vendor, by }) =>
            by.test(importer) && (path === vendor.specifier || path.startsWith(`${vendor.specifier}/`)),
        );
        if (owner === undefined || args.pluginData === checking) return undefined;
        const found = await build.resolve(path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: checking });
        // Another version of the package (or none): bundled where it is used, as Node would load it.
        if (!found.path.startsWith(owner.root)) return undefined;
        const name = owner.vendor.name;
        if (!owner.entries.includes(path)) {
          throw new Error(
            `${importer} imports ${path}: add it to the entries of the shared vendor ${name} (tsup.config.ts)`,
          );
        }
        return { path: `./vendor/${name}.cjs${SHARED_EXPORT}${path}`, namespace: "insomnia-lazy-require" };
      });
      build.onResolve({ filter: /^\.\/vendor\// }, (args) => ({ path: args.path, external: true }));
      // One of our own modules made a vendor file (otlp): its dynamic import becomes the lazy require of that file.
      build.onResolve({ filter: /^\.\/[^/]+\.ts$/ }, (args) => {
        const vendor = args.kind === "dynamic-import" ? bySpecifier.get(args.path) : undefined;
        return vendor === undefined ? undefined : { path: vendor, namespace: "insomnia-lazy-require" };
      });
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        // A generated vendor entry imports the package itself.
        if (args.kind === "entry-point" || args.importer.includes(GENERATED_ENTRIES)) return undefined;
        const vendor = bySpecifier.get(args.path);
        if (vendor === undefined && !isBuiltin(args.path)) return undefined;
        const target = vendor ?? args.path;
        if (args.kind === "import-statement" || args.kind === "dynamic-import")
          return { path: target, namespace: "insomnia-lazy-require" };
        return vendor === undefined ? undefined : { path: vendor, external: true };
      });
      build.onLoad({ filter: /.*/, namespace: "insomnia-lazy-require" }, (args) => ({
        contents: lazyRequireModule(args.path),
        loader: "js",
        resolveDir: HERE,
      }));
    },
  };
}

const FILES_PLACEHOLDER = '"__POD_BUNDLE_FILES__"';

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** Writes each bundle file's content id (the compile cache's key) and encoding into the launcher. */
async function writeBundleFiles(outDir: string): Promise<void> {
  const names = ["pod.cjs", ...VENDORS.map((vendor) => `vendor/${vendor.name}.cjs`)];
  const files: Record<string, { id: string; ascii: boolean; dynamicImport: boolean }> = {};
  for (const name of names) {
    const bytes = await readFile(join(outDir, name));
    files[name] = {
      id: createHash("sha256").update(bytes).digest("hex").slice(0, 16),
      ascii: bytes.every((byte) => byte < 0x80),
      dynamicImport: bytes.includes("import("),
    };
  }
  const launcher = join(outDir, "bin.cjs");
  const text = await readFile(launcher, "utf8");
  if (occurrences(text, FILES_PLACEHOLDER) !== 1) throw new Error(`${launcher}: expected ${FILES_PLACEHOLDER} once`);
  await writeFile(
    launcher,
    text.replace(FILES_PLACEHOLDER, () => JSON.stringify(JSON.stringify(files))),
  );
}

/** The `pod` bin (above), built into `outDir`. */
export function binConfig(outDir: string): Options {
  return {
    ...baseConfig,
    outDir,
    entry: { bin: "src/bin.ts", pod: "src/pod.ts", ...vendorEntries() },
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    splitting: false,
    // Everything is inlined but a database driver's optional native parts (never installed).
    noExternal: [/^(?!pg-native$|pg-cloudflare(?:$|\/))/],
    esbuildPlugins: [vendorFiles()],
    // esbuild writes CommonJS itself (tsup would go through rollup, hoisting every require),
    // and tree-shakes the bundle as it does; `node:` stays, for vendorFiles.
    treeshake: false,
    removeNodeProtocol: false,
    // The libraries' `import.meta.url` (their own location) is the bundle file's.
    define: { "import.meta.url": "__podImportMetaUrl" },
    banner: { js: 'const __podImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    esbuildOptions(options) {
      // `import()` of our own modules becomes a lazy `require`: one file, evaluated on demand.
      options.supported = { ...options.supported, "dynamic-import": false };
      // Non-ASCII text in strings is written as escapes, so a file is ASCII unless a comment is
      // not: the launcher reads ASCII files as latin1 (exact, and no UTF-8 decoding).
      options.charset = "ascii";
      // No comments either: a comment is the one place a non-ASCII byte or an `import(` that
      // is not code could stay, and either would cost every start (see BundleFile). Licence
      // comments go to dist/*.LEGAL.txt.
      options.minifyWhitespace = true;
      options.legalComments = "external";
    },
    async onSuccess() {
      await copyDataFiles(outDir);
      await writeBundleFiles(outDir);
    },
  };
}

// The library entry (dist/index.js) is tsdown's, like every other package's (tsdown.config.ts):
// both builds write into dist/ and neither cleans it (the build script empties it first).
export default defineConfig({ ...binConfig("dist"), clean: false });
