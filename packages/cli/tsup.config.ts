import { cp, mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { defineConfig, type Options } from "tsup";
import { baseConfig } from "../../tsup.base.ts";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/*
 * The `pod` bin is one bundle (issue 15): our packages and their dependencies are inlined and
 * tree-shaken, so a start resolves no package and reads a handful of files instead of ~100.
 * Commands are `import()`ed by main.ts, so each is its own chunk; what only some commands
 * need (the AI SDK and its providers, gpt-tokenizer, a database driver) sits in chunks only
 * those commands import. The libraries stay plain ESM packages; only this build bundles them.
 *
 * What the libraries find at run time next to their own code is made to work from the bundle:
 * - @insomnia/manifest and @insomnia/template load yaml, valibot and Handlebars' parser on first
 *   use with `createRequire(import.meta.url)(...)`, which a bundler cannot follow. Those calls
 *   become plain `require("<same specifier>")`, which esbuild inlines as lazily evaluated
 *   CommonJS wrappers: still loaded on first use, but from the bundle, never from node_modules.
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

export default defineConfig({
  ...baseConfig,
  entry: ["src/index.ts", "src/bin.ts"],
  // Everything is inlined but a database driver's optional native parts (never installed).
  noExternal: [/^(?!pg-native$|pg-cloudflare(?:$|\/))/],
  esbuildPlugins: [bundledLibraries()],
  // Inlined CommonJS (yaml, Handlebars' parser) requires Node builtins: give it a real require.
  banner: {
    js: 'import { createRequire as __insomniaCreateRequire } from "node:module";\nconst require = __insomniaCreateRequire(import.meta.url);',
  },
});
