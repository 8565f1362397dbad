import { readFileSync, readdirSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

const root = join(import.meta.dirname, "..");
const packagesDir = join(root, "packages");

/**
 * The one-way dependency direction of design.md: cli -> pod -> (template, manifest,
 * scope, worker); template -> prompt-loader. Third-party packages a package may use
 * are listed too, so a stray import (e.g. handlebars in worker) fails here.
 */
const allowed: Record<string, readonly string[]> = {
  scope: [],
  manifest: ["yaml", "valibot"],
  "prompt-loader": [],
  template: ["@insomnia/prompt-loader", "handlebars"],
  worker: [],
  pod: ["@insomnia/scope", "@insomnia/manifest", "@insomnia/prompt-loader", "@insomnia/template", "@insomnia/worker"],
  cli: [
    "@insomnia/pod",
    "@insomnia/manifest",
    "@insomnia/prompt-loader",
    "@insomnia/template",
    "@insomnia/scope",
    "@insomnia/worker",
    "gpt-tokenizer",
  ],
};

const devOnly = new Set(["vitest", "fast-check", "tsup", "vitest/config"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return name === "__fixtures__" ? [] : sourceFiles(full);
    return /\.(ts|mts)$/.test(name) ? [full] : [];
  });
}

/** Bare package name of an import specifier, or undefined for relative and node: imports. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return undefined;
  if (builtinModules.includes(specifier.split("/")[0]!)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  const pattern =
    /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g;
  for (const m of text.matchAll(pattern)) found.push((m[1] ?? m[2] ?? m[3])!);
  return found;
}

const packageNames = readdirSync(packagesDir).filter((n) => statSync(join(packagesDir, n)).isDirectory());

describe("dependency direction", () => {
  test("every package has an entry in the allowed map", () => {
    expect(packageNames.sort()).toEqual(Object.keys(allowed).sort());
  });

  for (const name of packageNames) {
    test(`${name} imports only what design.md allows`, () => {
      const offenders: string[] = [];
      for (const file of sourceFiles(join(packagesDir, name, "src"))) {
        const isTest = /\.test\.ts$|\/testing\//.test(file);
        for (const spec of importsOf(file)) {
          const pkg = packageOf(spec);
          if (pkg === undefined || pkg === `@insomnia/${name}`) continue;
          if (isTest && devOnly.has(pkg)) continue;
          if (!allowed[name]!.includes(pkg)) offenders.push(`${file.slice(root.length + 1)} imports ${spec}`);
        }
      }
      expect(offenders).toEqual([]);
    });

    test(`${name} declares exactly the runtime dependencies it may use`, () => {
      const manifest = JSON.parse(readFileSync(join(packagesDir, name, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
      };
      const declared = Object.keys(manifest.dependencies ?? {});
      expect(declared.filter((d) => !allowed[name]!.includes(d))).toEqual([]);
      for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
        if (dep.startsWith("@insomnia/")) expect(range).toBe("workspace:^");
      }
    });
  }

  test("the worker never sees a template engine", () => {
    const text = sourceFiles(join(packagesDir, "worker", "src"))
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    expect(text).not.toMatch(/handlebars|@insomnia\/template|@insomnia\/prompt-loader/);
  });

  test("template takes scope data as plain values, not a Scope object", () => {
    const text = sourceFiles(join(packagesDir, "template", "src"))
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    expect(text).not.toMatch(/@insomnia\/scope/);
  });
});
