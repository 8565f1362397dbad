// One-off generator for package boilerplate (kept for adding packages later).
import { mkdirSync, writeFileSync, existsSync } from "node:fs";
const pkgs = {
  scope: { desc: "The security boundary of a pod: allow/deny path rules, effective permission, summary.", deps: {} },
  manifest: { desc: "The pod manifest: YAML layers, overlays, safe parsing and validation.", deps: { yaml: "2.9.1", valibot: "^1.1.0" } },
  "prompt-loader": { desc: "Resolves $insomnia/, $user/ and $workspace/ prompt references to file text, safely.", deps: {}, files: ["dist", "prompts"] },
  template: { desc: "Parses, checks and renders a pod's instruction file (Handlebars) with the fixed trailing section.", deps: { handlebars: "^4.7.10", "@insomnia/prompt-loader": "workspace:^" } },
  worker: { desc: "The agent loop: holds a finished system prompt string, tools, history and an LLM client.", deps: {}, entries: ["testing"] },
  pod: { desc: "A pod: builds scope, parses the instruction, materializes the system prompt once, keeps it in a segment log.", deps: { "@insomnia/scope": "workspace:^", "@insomnia/manifest": "workspace:^", "@insomnia/prompt-loader": "workspace:^", "@insomnia/template": "workspace:^", "@insomnia/worker": "workspace:^" } },
  cli: { desc: "The pod command: prompt, check, init.", deps: { "@insomnia/pod": "workspace:^", "@insomnia/manifest": "workspace:^", "@insomnia/prompt-loader": "workspace:^", "@insomnia/template": "workspace:^" }, bin: true },
};
for (const [name, p] of Object.entries(pkgs)) {
  const dir = `packages/${name}`;
  mkdirSync(`${dir}/src`, { recursive: true });
  const entries = ["index", ...(p.entries ?? []), ...(p.bin ? ["bin"] : [])];
  const exportsMap = { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } };
  for (const e of p.entries ?? []) exportsMap[`./${e}`] = { types: `./dist/${e}.d.ts`, import: `./dist/${e}.js` };
  exportsMap["./package.json"] = "./package.json";
  const pkg = {
    name: `@insomnia/${name}`,
    version: "0.0.0",
    description: p.desc,
    license: "UNLICENSED",
    type: "module",
    sideEffects: false,
    exports: exportsMap,
    main: "./dist/index.js",
    types: "./dist/index.d.ts",
    ...(p.bin ? { bin: { pod: "./dist/bin.js" } } : {}),
    files: p.files ?? ["dist"],
    engines: { node: ">=20.19" },
    publishConfig: { registry: "http://127.0.0.1:4873/", access: "restricted" },
    scripts: {
      build: "tsdown",
      typecheck: "tsc -p tsconfig.json",
      lint: "publint --strict",
      test: "vitest run",
    },
    dependencies: p.deps,
  };
  writeFileSync(`${dir}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
  writeFileSync(`${dir}/tsconfig.json`, JSON.stringify({ extends: "../../tsconfig.base.json", include: ["src", "tsup.config.ts", "vitest.config.ts"] }, null, 2) + "\n");
  writeFileSync(`${dir}/tsup.config.ts`, `import { defineConfig } from "tsdown";
import { baseConfig } from "../../tsdown.base.ts";

export default defineConfig({
  ...baseConfig,
  entry: [${entries.map((e) => `"src/${e}.ts"`).join(", ")}],
});
`);
  writeFileSync(`${dir}/vitest.config.ts`, `import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
`);
  if (!existsSync(`${dir}/src/index.ts`)) writeFileSync(`${dir}/src/index.ts`, `export {};\n`);
  for (const e of p.entries ?? []) if (!existsSync(`${dir}/src/${e}.ts`)) writeFileSync(`${dir}/src/${e}.ts`, `export {};\n`);
  if (p.bin && !existsSync(`${dir}/src/bin.ts`)) writeFileSync(`${dir}/src/bin.ts`, `#!/usr/bin/env node\nexport {};\n`);
}
