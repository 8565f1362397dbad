import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { builtinModules, createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Options } from "tsup";
import { baseConfig } from "../../tsup.base.ts";
import { VALIBOT_FUNCTIONS } from "../manifest/src/lazy-dependencies.ts";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/*
 * The `pod` bin (issue 15) is CommonJS bundles run through a V8 code cache
 * (src/compile-cache.ts): Node 20 caches no compiled code itself, and a CommonJS file loads
 * with less work than ES modules. The library entry (dist/index.js) stays plain ESM.
 *
 * - dist/bin.cjs: the launcher (src/launcher.ts); loads dist/pod.cjs through the cache.
 * - dist/pod.cjs: the CLI and our packages, inlined and tree-shaken. Commands are `import()`ed
 *   by main.ts, so each is evaluated only when it runs.
 * - dist/vendor/<name>.cjs: each third-party package the bin loads on first use (VENDORS), one
 *   self-contained file each, loaded by a `require("./vendor/<name>.cjs")` in place of the
 *   package, so a command reads and compiles only what it uses and each file has its own
 *   cache entry.
 *
 * What the libraries find at run time next to their own code is made to work from the bundle:
 * - @insomnia/manifest and @insomnia/template load yaml, valibot and Handlebars' parser on first
 *   use with `createRequire(import.meta.url)(...)`, which a bundler cannot follow. Those calls
 *   become plain `require("<same specifier>")`, which the vendor plugin points at their files.
 * - @insomnia/template reads `prebuilt-asts.json` next to its code: copied into the output dir.
 * - @insomnia/prompt-loader's builtin prompts are `../prompts/` of its code: in the bundle they
 *   are `./prompts/` of the output dir, where they are copied.
 * Each rewrite must match exactly as often as stated, so a change in a library fails this
 * build instead of shipping a bin that cannot find its files.
 */

interface Rewrite {
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

const REWRITES: Record<string, readonly Rewrite[]> = {
  manifest: [
    { from: 'require2("yaml")', to: 'require("yaml")', count: 1 },
    { from: 'require2("valibot")', to: 'require("valibot")', count: 1 },
  ],
  template: [
    {
      from: "createRequire(import.meta.url)(PARSER_FILE)",
      to: 'require("handlebars/dist/cjs/handlebars/compiler/base.js")',
      count: 1,
    },
    {
      from: 'createRequire(import.meta.url)("handlebars/package.json")',
      to: 'require("handlebars/package.json")',
      count: 1,
    },
  ],
  "prompt-loader": [
    { from: 'new URL("../prompts/", import.meta.url)', to: 'new URL("./prompts/", import.meta.url)', count: 1 },
  ],
};

const LIBRARY_DIST = /[\\/](manifest|template|prompt-loader)[\\/]dist[\\/]index\.js$/;

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** Rewrites the libraries' run-time lookups (above) and copies their data files next to the bundle. */
function bundledLibraries(): Plugin {
  return {
    name: "insomnia-bundled-libraries",
    setup(build) {
      const data = new Map<string, string>();
      build.onLoad({ filter: LIBRARY_DIST }, async (args) => {
        const name = LIBRARY_DIST.exec(args.path)?.[1] ?? "";
        let text = await readFile(args.path, "utf8");
        for (const rewrite of REWRITES[name] ?? []) {
          const found = occurrences(text, rewrite.from);
          if (found !== rewrite.count) {
            throw new Error(
              `${args.path}: expected \`${rewrite.from}\` ${rewrite.count} time(s), found ${found}; update packages/cli/tsup.config.ts`,
            );
          }
          text = text.split(rewrite.from).join(rewrite.to);
        }
        if (name === "template") data.set("prebuilt-asts.json", join(dirname(args.path), "prebuilt-asts.json"));
        if (name === "prompt-loader") data.set("prompts", join(dirname(args.path), "..", "prompts"));
        return { contents: text, loader: "js" };
      });
      build.onEnd(async (result) => {
        if (result.errors.length > 0) return;
        const outdir = build.initialOptions.outdir;
        if (outdir === undefined) throw new Error("the bundled bin needs an outDir");
        for (const needed of ["prebuilt-asts.json", "prompts"]) {
          const from = data.get(needed);
          if (from === undefined) throw new Error(`the bundle did not load the library that owns ${needed}`);
          await mkdir(outdir, { recursive: true });
          await cp(from, join(outdir, needed), { recursive: true, dereference: true });
        }
      });
    },
  };
}

interface Vendor {
  /** The file: dist/vendor/<name>.cjs. */
  readonly name: string;
  /** What our code imports or requires. */
  readonly specifier: string;
  /** The workspace package that depends on it (where it resolves), relative to this one. */
  readonly from: string;
  /**
   * Which of the package's builds is bundled: its CommonJS one (what a library `require`s),
   * or its ES modules, which esbuild tree-shakes (the providers: a quarter less to run, most of
   * it unused parts of zod).
   */
  readonly build: "require" | "import";
  /** Of an `import` build: only these exports (esbuild drops the rest); all of them when absent. */
  readonly names?: readonly string[];
}

const VENDORS: readonly Vendor[] = [
  { name: "yaml", specifier: "yaml", from: "../manifest", build: "require" },
  // @insomnia/manifest calls a dozen of valibot's hundreds of functions, and lists them.
  { name: "valibot", specifier: "valibot", from: "../manifest", build: "import", names: VALIBOT_FUNCTIONS },
  {
    name: "handlebars-parser",
    specifier: "handlebars/dist/cjs/handlebars/compiler/base.js",
    from: "../template",
    build: "require",
  },
  { name: "anthropic", specifier: "@ai-sdk/anthropic", from: ".", build: "import" },
  { name: "openai", specifier: "@ai-sdk/openai", from: ".", build: "import" },
  { name: "openai-compatible", specifier: "@ai-sdk/openai-compatible", from: ".", build: "import" },
  { name: "pg", specifier: "pg", from: "../segment-store-postgres", build: "require" },
  // @insomnia/mcp with the MCP SDK (and its zod, ajv): loaded only when a manifest declares servers.
  { name: "mcp", specifier: "@insomnia/mcp", from: ".", build: "import" },
  { name: "o200k-base", specifier: "gpt-tokenizer/encoding/o200k_base", from: ".", build: "require" },
];

const HERE = dirname(fileURLToPath(import.meta.url));

/** Where the entry files of `build: "import"` vendors are generated, in the package using each. */
const GENERATED_ENTRIES = join("node_modules", ".cache", "pod-vendor-entries");

/**
 * Each vendor's entry: its CommonJS file as Node resolves it from the package using it, or a
 * generated `export * from "<specifier>"` there (or `export { <names> } from …`), so that esbuild resolves its ES modules.
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
      const names = vendor.names === undefined ? "*" : `{ ${vendor.names.join(", ")} }`;
      writeFileSync(entry, `export ${names} from ${JSON.stringify(vendor.specifier)};\n`);
      return [`vendor/${vendor.name}`, entry];
    }),
  );
}

const BUILTINS = new Set(builtinModules);
const requireHere = createRequire(import.meta.url);

/**
 * The CommonJS module an ES module's import of `specifier` resolves to. esbuild imports a
 * CommonJS module through `__toESM`, which copies every own property of its exports onto a new
 * object as a getter, once per importing module: for the builtins, dozens of modules times
 * node:fs's hundred names: a tenth of the instructions of a `pod run` start (and V8 optimised
 * the copying loop on a second thread). A builtin whose exports are an object (node:fs,
 * node:path, …) is therefore exported as an object that inherits from it: it has no own
 * properties to copy, and every import (named, namespace or default) reads the builtin's own,
 * current values through the prototype. (A default import is that object, not the builtin
 * itself: a method called on it gets it as `this`, as one called on a namespace import always
 * did; Node's builtins' functions do not use `this`, they are routinely destructured.) A builtin whose exports are a function (node:module, node:stream: a default import may
 * be called or `new`ed) and the vendor files are exported as they are.
 */
function lazyRequireModule(specifier: string, builtin: boolean): string {
  const required = `require(${JSON.stringify(specifier)})`;
  const object = builtin && typeof requireHere(specifier) === "object";
  return object ? `module.exports = { __proto__: ${required} };` : `module.exports = ${required};`;
}
const isBuiltin = (specifier: string): boolean => specifier.startsWith("node:") || BUILTINS.has(specifier);

/**
 * Our code's imports of a vendor become `require("./vendor/<name>.cjs")`, and every import of a
 * vendor or a Node builtin from ES module code is made lazy. esbuild turns an ES module's
 * import of an external into a `require` at the top of the CommonJS output, which would load
 * every vendor and builtin any command uses at every start. Each such import instead resolves
 * to a small CommonJS module (lazyRequireModule), which esbuild evaluates when the importing
 * module is (a command's modules only when the command runs).
 */
function vendorFiles(): Plugin {
  const bySpecifier = new Map(VENDORS.map((vendor) => [vendor.specifier, `./vendor/${vendor.name}.cjs`]));
  return {
    name: "insomnia-vendor-files",
    setup(build) {
      build.onResolve({ filter: /^\.\/vendor\// }, (args) => ({ path: args.path, external: true }));
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
        contents: lazyRequireModule(args.path, !args.path.startsWith("./vendor/")),
        loader: "js",
        resolveDir: HERE,
      }));
    },
  };
}

/** An AI SDK package's ES module build (the providers', bundled from their ES modules: VENDORS). */
const AI_SDK_ESM = /[\\/]node_modules[\\/]@ai-sdk[\\/][^\\/]+[\\/]dist[\\/]index\.mjs$/;
/** `import { z } from "zod/v4";`, or `import { z as z2 } from "zod/v4";`: a whole line of the build. */
const ZOD_NAMED_Z = /^import \{ z(?: as (z\d+))? \} from "zod\/v4";$/gm;
/** Any other import that names zod 4's `z` (what ZOD_NAMED_Z must have left none of). */
const ZOD_OTHER_Z = /^import \{[^}]*\bz\b[^}]*\} from "zod\/v4";$/m;

/**
 * The providers' `import { z } from "zod/v4"` becomes `import * as z from "zod/v4"`, so that
 * esbuild tree-shakes zod in the providers' vendor files. zod exports `z` as its namespace
 * object, and an imported namespace is a value to esbuild: it built every namespace of zod
 * (`z`, `z.core`, `z.locales`, …, a thousand getters) and kept everything they name, though a
 * provider only calls `z.object(…)`, `z.string()` and the like. A namespace import of "zod/v4"
 * has the same members (its exports are `z`'s, plus `z` and `default`), and the providers use
 * `z` for nothing but reading members (checked by hand for the versions in the lockfile), so
 * each call is the same function; esbuild then keeps only what the providers use (zod declares
 * itself free of side effects). dist/vendor/anthropic.cjs went from 920 KB to 457 KB, and a
 * `pod run` to its first request byte from 270 M to 244 M instructions. The build fails if a
 * provider names `z` in another form, or no longer imports it this way at all.
 */
function zodNamespaceImports(file: string, text: string): string {
  if (!text.includes('from "zod/v4"')) return text;
  let found = 0;
  const rewritten = text.replace(ZOD_NAMED_Z, (_line, alias: string | undefined) => {
    found++;
    return `import * as ${alias ?? "z"} from "zod/v4";`;
  });
  const provider = VENDORS.some((vendor) => vendor.build === "import" && file.includes(`${vendor.specifier}/dist/`));
  if (ZOD_OTHER_Z.test(rewritten) || (provider && found === 0)) {
    throw new Error(`${file}: its imports of zod's \`z\` changed; update packages/cli/tsup.config.ts`);
  }
  return rewritten;
}

/** The Anthropic provider's build (its ES modules). */
const ANTHROPIC_ESM = /[\\/]@ai-sdk[\\/]anthropic[\\/]dist[\\/]index\.mjs$/;
/** The statement that declares its schema of a system message's `providerOptions.anthropic`. */
const SYSTEM_OPTIONS_SCHEMA = /^var anthropicSystemMessageProviderOptions = lazySchema\d*\([\s\S]*?^\);$/m;
/**
 * SHA-256 of that statement with its comments and white space taken out, for
 * @ai-sdk/anthropic 3.0.140: `z.object({ clearAt, effort, toolChanges })`, all three
 * `.optional()`, nothing else (no default, no transform, not strict).
 */
const SYSTEM_OPTIONS_SCHEMA_SHA256 = "603819c46ca041673d303e91276720b039f91c75ef3bb6f823cccc27690084eb";
/** Its two uses: `await parseProviderOptions({ provider: "anthropic", providerOptions…, schema: … })`. */
const SYSTEM_OPTIONS_PARSE =
  /await (parseProviderOptions\d*)\(\{\s*provider: "anthropic",\s*providerOptions(?:: ([\w.]+))?,\s*schema: anthropicSystemMessageProviderOptions\s*\}\)/g;

/**
 * The Anthropic provider validates each system message's `providerOptions.anthropic` with a
 * zod schema (for its mid-conversation tool changes), which it builds on first use: the first
 * zod schema of a process, about 4 ms of a `pod run` before its first request, to find nothing
 * in the `{ cacheControl }` that @insomnia/ai-sdk puts on the system prompt. For that schema the
 * answer is known without it: an object whose `clearAt`, `effort` and `toolChanges` are all
 * undefined parses to an object with none of them (the schema is not strict, so other keys such
 * as `cacheControl` are dropped, and cannot fail). Each parse becomes
 * `(podSystemOptionsUnset(o) ? undefined : await parseProviderOptions(…))`, and the provider
 * reads only those three fields of the result, each through `== null ? void 0`, so undefined
 * and that empty object mean the same to it. Anything else (a value that is not an object, any
 * of the three set) is parsed as before, errors included. The build fails if the schema's text
 * is not the pinned one or the parses are not found as expected: then check the reasoning
 * against the new provider and pin its schema again (the error prints the new digest).
 */
function anthropicSystemOptionsShortcut(file: string, text: string): string {
  if (!ANTHROPIC_ESM.test(file)) return text;
  const schema = SYSTEM_OPTIONS_SCHEMA.exec(text)?.[0];
  const digest =
    schema === undefined
      ? "(no such statement)"
      : createHash("sha256")
          .update(schema.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\s+/g, ""))
          .digest("hex");
  if (digest !== SYSTEM_OPTIONS_SCHEMA_SHA256) {
    throw new Error(
      `${file}: anthropicSystemMessageProviderOptions is not the schema anthropicSystemOptionsShortcut was checked against (its digest is ${digest}); check it again and update packages/cli/tsup.config.ts`,
    );
  }
  let found = 0;
  const rewritten = text.replace(SYSTEM_OPTIONS_PARSE, (call, _parse: string, options: string | undefined) => {
    found++;
    return `(podSystemOptionsUnset(${options ?? "providerOptions"}) ? void 0 : ${call})`;
  });
  if (found !== 2) {
    throw new Error(
      `${file}: expected 2 parses of anthropicSystemMessageProviderOptions, found ${found}; update packages/cli/tsup.config.ts`,
    );
  }
  return `${rewritten}
function podSystemOptionsUnset(providerOptions) {
  const options = providerOptions == null ? void 0 : providerOptions.anthropic;
  return typeof options === "object" && options !== null && !Array.isArray(options) && options.clearAt === void 0 && options.effort === void 0 && options.toolChanges === void 0;
}
`;
}

/** The AI SDK providers' sources, rewritten as they are loaded (above). */
function aiSdkSourceRewrites(): Plugin {
  return {
    name: "insomnia-ai-sdk-source-rewrites",
    setup(build) {
      build.onLoad({ filter: AI_SDK_ESM }, async (args) => {
        const text = await readFile(args.path, "utf8");
        const rewritten = anthropicSystemOptionsShortcut(args.path, zodNamespaceImports(args.path, text));
        return rewritten === text ? undefined : { contents: rewritten, loader: "js", resolveDir: dirname(args.path) };
      });
    },
  };
}

const FILES_PLACEHOLDER = '"__POD_BUNDLE_FILES__"';

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

/** The library entry, `import { main } from "@insomnia/cli"`: plain ESM on its dependencies. */
export const libraryConfig: Options = { ...baseConfig, entry: ["src/index.ts"] };

/** The `pod` bin (above), built into `outDir`. */
export function binConfig(outDir: string): Options {
  return {
    ...baseConfig,
    outDir,
    entry: { bin: "src/launcher.ts", pod: "src/bin.ts", ...vendorEntries() },
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    dts: false,
    splitting: false,
    // Everything is inlined but a database driver's optional native parts (never installed).
    noExternal: [/^(?!pg-native$|pg-cloudflare(?:$|\/))/],
    esbuildPlugins: [vendorFiles(), bundledLibraries(), aiSdkSourceRewrites()],
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
      // The global `Headers` of every bundle file is FetchHeaders (src/vendor-globals.ts): Node's
      // loads undici, which costs a `pod run` about as much as starting Node.
      options.inject = [...(options.inject ?? []), join(HERE, "src", "vendor-globals.ts")];
    },
    async onSuccess() {
      await writeBundleFiles(outDir);
    },
  };
}

// Both builds write into dist/: neither cleans it (the build script empties it first).
export default defineConfig([
  { ...libraryConfig, clean: false },
  { ...binConfig("dist"), clean: false },
]);
