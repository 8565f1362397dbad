import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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
  errors: [],
  // Reading a file inside a root, and the path containment it checks with: no package of ours.
  "safe-read": [],
  scope: ["@insomnia/errors", "@insomnia/safe-read"],
  // The one safe YAML reader: the manifest's layers and overlays, and SKILL.md frontmatter.
  "safe-yaml": ["yaml"],
  // yaml: its property test compares with the plain yaml parser.
  manifest: ["@insomnia/errors", "@insomnia/safe-read", "@insomnia/safe-yaml", "valibot", "yaml"],
  "prompt-loader": ["@insomnia/errors", "@insomnia/safe-read"],
  template: ["@insomnia/errors", "@insomnia/prompt-loader", "handlebars"],
  // Spans: the OpenTelemetry API only (design.md Part 3, "Cost and telemetry").
  worker: ["@insomnia/errors", "@opentelemetry/api"],
  "segment-store": ["@insomnia/errors"],
  // The @types packages are there because the published .d.ts import pg and json-schema (types only).
  "segment-store-postgres": ["@insomnia/errors", "@insomnia/segment-store", "pg", "@types/pg"],
  // `ai` (the AI SDK's streamText) needs zod as its peer; zod is declared so consumers get it.
  "ai-sdk": ["@insomnia/errors", "@insomnia/worker", "@ai-sdk/provider", "ai", "zod", "@types/json-schema"],
  skills: ["@insomnia/errors", "@insomnia/safe-read", "@insomnia/safe-yaml"],
  "fs-tools": ["@insomnia/errors", "@insomnia/safe-read", "@insomnia/scope", "@insomnia/worker"],
  mcp: ["@insomnia/errors", "@insomnia/worker", "@modelcontextprotocol/sdk"],
  sandbox: ["@insomnia/errors", "@insomnia/safe-read", "@insomnia/scope", "@insomnia/worker"],
  pod: [
    "@insomnia/errors",
    "@insomnia/safe-read",
    "@insomnia/scope",
    "@insomnia/manifest",
    "@insomnia/prompt-loader",
    "@insomnia/template",
    "@insomnia/worker",
    "@insomnia/segment-store",
    "@insomnia/skills",
  ],
  cli: [
    "@insomnia/errors",
    "@insomnia/safe-read",
    "@insomnia/pod",
    "@insomnia/manifest",
    "@insomnia/prompt-loader",
    "@insomnia/template",
    "@insomnia/scope",
    "@insomnia/worker",
    "@insomnia/segment-store",
    "@insomnia/segment-store-postgres",
    "@insomnia/ai-sdk",
    "@insomnia/skills",
    "@insomnia/fs-tools",
    "@insomnia/mcp",
    "@insomnia/sandbox",
    "@ai-sdk/anthropic",
    "@ai-sdk/openai",
    "@ai-sdk/openai-compatible",
    "gpt-tokenizer",
    "undici",
    // The OTLP export of pod run, loaded only when an endpoint is set (src/otlp-sdk.ts).
    "@opentelemetry/api",
    "@opentelemetry/sdk-trace-base",
    "@opentelemetry/context-async-hooks",
    "@opentelemetry/resources",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/exporter-trace-otlp-proto",
  ],
};

// The OpenTelemetry SDK is a test-only dependency of a library: its in-memory exporter captures the spans.
const devOnly = new Set(["vitest", "fast-check", "tsup", "vitest/config", "@opentelemetry/sdk-trace-base"]);

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
  // Static imports and re-exports, `import("x")`, `import "x"`, and CommonJS loads through
  // `require("x")`, `require.resolve("x")` or `createRequire(...)("x")`.
  const pattern =
    /(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']|\brequire(?:\.resolve)?\s*\(\s*["']([^"']+)["']\s*\)|createRequire\([^)]*\)\s*\(\s*["']([^"']+)["']\s*\)/g;
  for (const m of text.matchAll(pattern)) found.push((m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5])!);
  return found;
}

const packageNames = readdirSync(packagesDir).filter((n) => statSync(join(packagesDir, n)).isDirectory());

describe("dependency direction", () => {
  test("the import scanner sees static, dynamic and CommonJS loads", () => {
    const dir = mkdtempSync(join(tmpdir(), "arch-"));
    const file = join(dir, "sample.ts");
    writeFileSync(
      file,
      [
        'import { a } from "static-dep";',
        'export * from "reexported-dep";',
        'import "side-effect-dep";',
        'const lazy = await import("dynamic-dep");',
        'const r = require("required-dep");',
        'require.resolve("resolved-dep/package.json");',
        'createRequire(import.meta.url)("created-require-dep");',
      ].join("\n"),
    );
    expect(importsOf(file).map(packageOf)).toEqual([
      "static-dep",
      "reexported-dep",
      "side-effect-dep",
      "dynamic-dep",
      "required-dep",
      "resolved-dep",
      "created-require-dep",
    ]);
    rmSync(dir, { recursive: true });
  });

  test("every package has an entry in the allowed map", () => {
    expect(packageNames.filter((name) => allowed[name] === undefined)).toEqual([]);
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
