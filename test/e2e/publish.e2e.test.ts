import { execFile, execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type LocalRegistry, startRegistry } from "./registry.ts";

const repoRoot = join(import.meta.dirname, "..", "..");
/** Every published package of the workspace, by directory name. */
const packages = readdirSync(join(repoRoot, "packages")).filter((name) => {
  const manifest = join(repoRoot, "packages", name, "package.json");
  return existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { private?: boolean }).private !== true;
});

let work: string;
let copy: string;
let registry: LocalRegistry | undefined;

/**
 * This process's environment without NODE_PATH: pnpm's bin shim for Vitest sets it to the
 * workspace's packages, and a consumer's process would find there what a package forgot to declare.
 */
const { NODE_PATH: _workspacePackages, ...hostEnv } = process.env;

/** Runs a command, failing with its output when it exits non-zero. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: { ...hostEnv, ...options.env },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** A copy of the working tree (tracked and new files, no ignored ones) as its own git repo. */
function copyRepo(to: string): void {
  const files = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], {
    cwd: repoRoot,
    encoding: "utf8",
  })
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    const target = join(to, file);
    mkdirSync(dirname(target), { recursive: true });
    try {
      cpSync(join(repoRoot, file), target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error; // deleted but not yet staged
    }
  }
  const git = {
    GIT_AUTHOR_NAME: "e2e",
    GIT_AUTHOR_EMAIL: "e2e@localhost",
    GIT_COMMITTER_NAME: "e2e",
    GIT_COMMITTER_EMAIL: "e2e@localhost",
  };
  run("git", ["init", "-q", "-b", "main"], { cwd: to });
  run("git", ["add", "-A"], { cwd: to });
  run("git", ["commit", "-q", "-m", "e2e snapshot"], { cwd: to, env: git });
}

/** Turbo's local cache for this checkout: a git worktree shares its main worktree's. */
function turboCacheDir(): string {
  const common = execFileSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], {
    cwd: repoRoot,
    encoding: "utf8",
  }).trim();
  return join(dirname(common), ".turbo", "cache");
}

/** GET a JSON document over a fresh connection (Verdaccio closes idle keep-alive sockets). */
function getJson(url: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    }).on("error", reject);
  });
}

/** How a consumer installs: npm, as most users do, or pnpm with each package seeing only its own dependencies. */
type Installer = "npm" | "pnpm-isolated";

/** A consumer project outside the workspace that takes @insomnia/* from the local registry. */
function consumerProject(name: string, installer: Installer): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }, null, 2));
  const token = readFileSync(registry!.userconfig, "utf8");
  // pnpm links each package's own dependencies beside it, in a store outside the project (a
  // package's lookup would otherwise climb to the project's node_modules, which holds them all);
  // hoist=false leaves out the shared folder it would fill with every package of the install.
  const isolation =
    installer === "pnpm-isolated" ? `virtual-store-dir=${join(work, `${name}-store`)}\nhoist=false\n` : "";
  writeFileSync(join(dir, ".npmrc"), `@insomnia:registry=${registry!.url}\n${token}${isolation}`);
  return dir;
}

/** Runs a command without blocking, failing with its output when it exits non-zero. */
function runAsync(command: string, args: string[], options: { cwd: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: hostEnv, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(" ")} failed (${error.code}):\n${stdout}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

const installs = new Map<string, Promise<string>>();

/** The integrity of each @insomnia tarball this run published, as the registry serves it now. */
let published: Promise<Map<string, string>> | undefined;

async function publishedIntegrities(): Promise<Map<string, string>> {
  const integrities = new Map<string, string>();
  for (const name of packages) {
    const doc = (await getJson(`${registry!.url}@insomnia%2f${name}`)).body as {
      "dist-tags": { latest: string };
      versions: Record<string, { dist: { integrity: string } }>;
    };
    integrities.set(`@insomnia/${name}`, doc.versions[doc["dist-tags"].latest]!.dist.integrity);
  }
  return integrities;
}

/** Each @insomnia package in a consumer's lockfile (by its path there) with the integrity of the tarball installed. */
function lockedInsomniaPackages(dir: string, installer: Installer): [path: string, name: string, integrity: string][] {
  if (installer === "npm") {
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as {
      packages: Record<string, { integrity?: string }>;
    };
    return Object.entries(lock.packages).flatMap(([path, entry]) => {
      const name = /(@insomnia\/[^/]+)$/.exec(path)?.[1];
      return name === undefined ? [] : [[path, name, entry.integrity ?? ""]];
    });
  }
  // pnpm-lock.yaml: `  '@insomnia/name@version':` then `    resolution: {integrity: …}`.
  const lock = readFileSync(join(dir, "pnpm-lock.yaml"), "utf8");
  return [...lock.matchAll(/^ {2}'(@insomnia\/[^@']+)@([^']+)':\n {4}resolution: \{integrity: ([^,}]+)/gm)].map(
    ([, name, version, integrity]) => [`${name}@${version}`, name!, integrity!],
  );
}

/** The @insomnia packages in a consumer's lockfile whose tarball is not the one this run published. */
async function staleInsomniaPackages(dir: string, installer: Installer, specs: string[]): Promise<string[]> {
  published ??= publishedIntegrities().catch((error: unknown) => {
    published = undefined; // asked again by the next install
    throw error;
  });
  const integrities = await published;
  const locked = lockedInsomniaPackages(dir, installer);
  const missing = specs.filter((spec) => !locked.some(([, name]) => name === spec));
  if (missing.length > 0) throw new Error(`${dir}: the lockfile does not list ${missing.join(", ")}`);
  return locked.flatMap(([path, name, integrity]) => {
    const expected = integrities.get(name);
    if (expected === undefined) throw new Error(`${path} in ${dir} is not a package this run published`);
    return integrity === expected ? [] : [path];
  });
}

/** Installs `specs` into a new consumer project `name`; throws when the install fails or takes another run's @insomnia tarball. */
async function installConsumer(
  name: string,
  specs: string[],
  installer: Installer,
  freshness: "prefer-offline" | "fresh",
): Promise<string> {
  rmSync(join(work, name), { recursive: true, force: true });
  rmSync(join(work, `${name}-store`), { recursive: true, force: true });
  const dir = consumerProject(name, installer);
  const offline = freshness === "prefer-offline" ? ["--prefer-offline"] : [];
  if (installer === "npm") {
    const online = freshness === "fresh" ? ["--prefer-online"] : [];
    await runAsync("npm", ["install", ...offline, ...online, "--no-audit", "--no-fund", "--loglevel=error", ...specs], {
      cwd: dir,
    });
  } else {
    await runAsync("pnpm", ["add", ...offline, "--reporter=silent", ...specs], { cwd: dir });
  }
  const stale = await staleInsomniaPackages(dir, installer, specs);
  if (stale.length > 0)
    throw new Error(`${name}: ${installer} installed another run's tarball for ${stale.join(", ")}`);
  return dir;
}

/** A consumer project with `specs` installed from the registry (started once, shared by the tests that need it). */
function installed(name: string, specs: string[], installer: Installer): Promise<string> {
  let install = installs.get(name);
  if (install === undefined) {
    // Metadata the package manager has cached is used as it is, which saves asking the public
    // registry again for every package. Cached metadata can be out of date (an earlier run's
    // registry on the same port, a dependency released since): then the consumer is installed
    // again from scratch with fresh metadata.
    install = installConsumer(name, specs, installer, "prefer-offline").catch(() =>
      installConsumer(name, specs, installer, "fresh"),
    );
    // A failure is reported by the test that awaits it, not as an unhandled rejection.
    install.catch(() => undefined);
    installs.set(name, install);
  }
  return install;
}

/** The packages the README's typed example imports: each one is also a dependency of the CLI. */
const README_PACKAGES = [
  "@insomnia/manifest",
  "@insomnia/pod",
  "@insomnia/worker",
  "@insomnia/scope",
  "@insomnia/segment-store-postgres",
  "@insomnia/ai-sdk",
];

/** Every consumer of the tests below: each installs only what it names, from the registry. */
const CONSUMERS: ReadonlyArray<readonly [string, string[], Installer]> = [
  // The CLI with npm, as most users install it; the README's packages beside it add nothing to
  // the tree, as the CLI depends on each of them (the cli test checks that).
  ["consumer-npm", ["@insomnia/cli", ...README_PACKAGES], "npm"],
  // One install of every package where each one's code resolves only what it declares: what
  // installing each alone would show, in one install instead of seventeen.
  ["consumer-isolated", packages.map((name) => `@insomnia/${name}`), "pnpm-isolated"],
];

/** What `id` resolves to from the installed package `from` of consumer `dir`, or the resolve error's code. */
async function resolveFrom(dir: string, from: string, id: string): Promise<string> {
  const script = `try { console.log(require("node:module").createRequire(process.argv[1]).resolve(process.argv[2])); } catch (error) { console.log(error.code); }`;
  const manifest = realpathSync(join(dir, "node_modules", ...from.split("/"), "package.json"));
  return (await runAsync(process.execPath, ["-e", script, manifest, id], { cwd: dir })).trim();
}

function consumerInstalled(name: string): Promise<string> {
  const consumer = CONSUMERS.find(([consumerName]) => consumerName === name);
  if (consumer === undefined) throw new Error(`no consumer named ${name}`);
  return installed(name, consumer[1], consumer[2]);
}

beforeAll(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), "insomnia-e2e-")));
  registry = await startRegistry(repoRoot, join(work, "registry"));
  copy = join(work, "repo");
  copyRepo(copy);
  run("pnpm", ["install", "--frozen-lockfile", "--offline"], { cwd: copy });
  run("pnpm", ["release"], {
    cwd: copy,
    env: {
      INSOMNIA_REGISTRY: registry.url,
      NPM_CONFIG_USERCONFIG: registry.userconfig,
      TURBO_TELEMETRY_DISABLED: "1",
      // The copy's sources are the repo's: its build is the one `pnpm test` made, from turbo's cache.
      TURBO_CACHE_DIR: turboCacheDir(),
    },
  });
  // The installs are independent: all start now, and each test awaits its own.
  for (const [name] of CONSUMERS) void consumerInstalled(name);
});

afterAll(async () => {
  await registry?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

// Concurrent: while a test awaits its consumer's install or a process it started, another runs.
describe.concurrent("publishing to a private registry", () => {
  test("every package is published with real semver ranges for its workspace dependencies", async () => {
    for (const name of packages) {
      const response = await getJson(`${registry!.url}@insomnia%2f${name}`);
      expect(response.status).toBe(200);
      const doc = response.body as {
        "dist-tags": { latest: string };
        versions: Record<string, { dependencies?: Record<string, string> }>;
      };
      const latest = doc.versions[doc["dist-tags"].latest]!;
      for (const [dep, range] of Object.entries(latest.dependencies ?? {})) {
        expect(range, `${name} -> ${dep}`).not.toMatch(/^workspace:/);
        if (dep.startsWith("@insomnia/")) expect(range).toMatch(/^\^\d+\.\d+\.\d+$/);
      }
    }
  });

  test("every package loads with only its own dependencies, through import and through require() from CommonJS", async () => {
    const dir = await consumerInstalled("consumer-isolated");
    // The install isolates: from a package's own directory, a package it does not declare is not found.
    expect(await resolveFrom(dir, "@insomnia/errors", "@insomnia/scope")).toBe("MODULE_NOT_FOUND");
    expect(await resolveFrom(dir, "@insomnia/scope", "@insomnia/errors")).toMatch(/errors[/\\]dist[/\\]index\.js$/);
    // One process per way of loading: resolution goes by each package's own path, so what one
    // package loaded first cannot satisfy another's undeclared dependency.
    const load = (statement: string) =>
      `const counts = {};
for (const name of JSON.parse(process.argv[2])) {
  try { counts[name] = Object.keys(${statement}).length; } catch (error) { counts[name] = String(error); }
}
console.log(JSON.stringify(counts));`;
    writeFileSync(join(dir, "load-all.mjs"), load('await import("@insomnia/" + name)'));
    writeFileSync(join(dir, "load-all.cjs"), load('require("@insomnia/" + name)'));
    const names = JSON.stringify(packages);
    const [esm, cjs] = await Promise.all(
      ["load-all.mjs", "load-all.cjs"].map(
        async (file) =>
          JSON.parse(await runAsync(process.execPath, [file, names], { cwd: dir })) as Record<string, number | string>,
      ),
    );
    expect(Object.keys(esm!).sort()).toEqual([...packages].sort());
    for (const name of packages) expect(esm![name], name).toBeGreaterThan(0);
    expect(cjs).toEqual(esm);
  });

  test("a strict TypeScript consumer compiles and runs the README's points from the installed packages", async () => {
    // With skipLibCheck false, every .d.ts these import must resolve its types: the packages
    // declare the type packages their declarations need (@types/pg, @types/json-schema).
    const dir = await consumerInstalled("consumer-npm");
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          skipLibCheck: false,
          typeRoots: [join(repoRoot, "node_modules", "@types")],
          types: ["node"],
        },
        files: ["consumer.mts"],
      }),
    );
    const consumer = `import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest, merge, type PartialManifest } from "@insomnia/manifest";
import { MemorySegmentStore, Pod, type PodSegmentRecord, type PodWorker } from "@insomnia/pod";
import { Worker, type LlmClient, type LlmResponse, type ToolCall } from "@insomnia/worker";
import { AiSdkError, aiSdkClient } from "@insomnia/ai-sdk";
import { openPostgresStore, type PostgresSegmentStoreOptions } from "@insomnia/segment-store-postgres";

const cwd = mkdtempSync(join(tmpdir(), "consumer-"));
// Hermetic: no user layer, no host environment.
const loaded = await loadManifest({ cwd, userLayer: false, env: {}, manifestFile: undefined, overlays: undefined });
// What one function returns, the next one takes.
const layer: PartialManifest = loaded.manifest;
const merged = merge(layer, { worker: { max_turns: 3 } });
const calls: ToolCall[] = [];
const client: LlmClient = {
  async complete(): Promise<LlmResponse> {
    return { content: "hi", toolCalls: calls.length > 0 ? calls : undefined, usage: undefined };
  },
};
const worker: PodWorker = new Worker({ client, maxIterations: undefined, onMessage: undefined });
const store = new MemorySegmentStore();
const pod = await Pod.fromManifest(loaded.manifest, { worker, store, env: {}, loader: undefined, clock: undefined });
await pod.run("hello");
const prompt: string | undefined = pod.systemPrompt;
const span = pod.sections?.workingBoundaries;
const { records } = await store.readSegment(pod.segmentId ?? "");
const typed = records as readonly PodSegmentRecord[];
const messages = typed.flatMap((r) => (r.type === "message" ? [r.message.role] : []));
console.log(JSON.stringify({
  maxTurns: merged.worker?.max_turns,
  boundaries: prompt !== undefined && span !== undefined ? prompt.slice(span.start, span.end).split("\\n")[1] : undefined,
  tools: pod.tools,
  messages,
}));
await pod.close();
// Typed only (no database here): what a service maps to HTTP is a field, not message text.
const storeOptions: PostgresSegmentStoreOptions = { connectionString: "postgres://localhost/x", podId: "p" };
const open: typeof openPostgresStore = openPostgresStore;
const status = (error: unknown): number | undefined => (AiSdkError.is(error) ? error.status : undefined);
void [storeOptions, open, status, aiSdkClient];
`;
    writeFileSync(join(dir, "consumer.mts"), consumer);
    // One compile checks the types and writes what Node 20 runs: the same code as .mjs.
    await runAsync(
      process.execPath,
      [join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--outDir", "out"],
      { cwd: dir },
    );
    const out = JSON.parse(await runAsync(process.execPath, [join("out", "consumer.mjs")], { cwd: dir })) as Record<
      string,
      unknown
    >;
    expect(out).toEqual({
      maxTurns: 3,
      boundaries: "## Working boundaries",
      tools: [],
      messages: ["user", "assistant"],
    });
    writeFileSync(
      join(dir, "scope.cjs"),
      'const { Scope } = require("@insomnia/scope"); console.log(typeof Scope.fromConfig);',
    );
    expect((await runAsync(process.execPath, ["scope.cjs"], { cwd: dir })).trim()).toBe("function");
  });

  test("a change to one package bumps that package and its dependents, not the others", () => {
    const git = {
      GIT_AUTHOR_NAME: "e2e",
      GIT_AUTHOR_EMAIL: "e2e@localhost",
      GIT_COMMITTER_NAME: "e2e",
      GIT_COMMITTER_EMAIL: "e2e@localhost",
    };
    run("git", ["add", "-A"], { cwd: copy });
    run("git", ["commit", "-q", "-m", "release"], { cwd: copy, env: git });
    writeFileSync(
      join(copy, ".changeset", "loader-fix.md"),
      '---\n"@insomnia/prompt-loader": patch\n---\n\nFix a thing.\n',
    );
    writeFileSync(join(copy, "packages", "prompt-loader", "src", "index.ts"), "// a change\n", { flag: "a" });
    const changeset = join(copy, "node_modules", "@changesets", "cli", "bin.js");
    const out = join(work, "status.json");
    run(process.execPath, [changeset, "status", "--output", out], { cwd: copy });
    const status = JSON.parse(readFileSync(out, "utf8")) as { releases: { name: string; type: string }[] };
    // "none": a package that has the changed one only as a devDependency is not released.
    const released = status.releases.filter((r) => r.type !== "none");
    expect(released.map((r) => `${r.name}:${r.type}`).sort()).toEqual([
      "@insomnia/cli:patch",
      "@insomnia/pod:patch",
      "@insomnia/prompt-loader:patch",
      "@insomnia/template:patch",
    ]);
  });

  test("template and prompt-loader alone render $insomnia/default from the installed tarball", async () => {
    // The isolated install: template and prompt-loader each resolve only their own dependencies.
    const dir = await consumerInstalled("consumer-isolated");
    writeFileSync(
      join(dir, "render.mjs"),
      `import { createRequire } from "node:module";
import { PromptLoader } from "@insomnia/prompt-loader";
import { SystemPromptTemplate } from "@insomnia/template";
const template = await SystemPromptTemplate.parse("$insomnia/default", new PromptLoader());
const prompt = template.render({
  now: new Date("2026-01-02T03:04:05Z"),
  cwd: "/srv/repo",
  tools: ["read_file", "run"],
  scope: { readable: ["/srv/repo"], writable: ["/srv/repo"], summary: "Readable:\\n  - /srv/repo\\nWritable:\\n  - /srv/repo" },
});
// The builtin's AST ships prebuilt: rendering it never loads Handlebars' parser.
const handlebarsLoaded = Object.keys(createRequire(import.meta.url).cache).some((id) => /handlebars.*\\.js$/.test(id));
process.stdout.write(JSON.stringify({ prompt, sources: template.sources, handlebarsLoaded }));
`,
    );
    const out = JSON.parse(run(process.execPath, ["render.mjs"], { cwd: dir })) as {
      prompt: string;
      sources: { ref: string; file: string; sha256: string }[];
      handlebarsLoaded: boolean;
    };
    expect(out.sources.map((s) => s.ref)).toEqual(["$insomnia/default"]);
    expect(out.sources[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(join(dir, "node_modules", "@insomnia", "template", "dist", "prebuilt-asts.json"))).toBe(true);
    expect(out.handlebarsLoaded).toBe(false);
    for (const name of ["template", "prompt-loader"]) {
      const changelog = readFileSync(join(dir, "node_modules", "@insomnia", name, "CHANGELOG.md"), "utf8");
      expect(changelog).toMatch(new RegExp(`^# @insomnia/${name}\\n\\n## 0\\.1\\.0\\n`));
    }
    expect(out.sources[0]!.file).toBe(
      realpathSync(join(dir, "node_modules", "@insomnia", "prompt-loader", "prompts", "default.md")),
    );
    expect(out.prompt).toContain("`/srv/repo`");
    expect(out.prompt).toContain("2026-01-02");
    expect(out.prompt).toContain("read_file, run");
    expect(out.prompt).toContain(
      "\n---\n## Working boundaries\n\nReadable:\n  - /srv/repo\nWritable:\n  - /srv/repo\n",
    );
    // Alone: from the template's own directory, a package it does not depend on is not found.
    expect(await resolveFrom(dir, "@insomnia/template", "@insomnia/pod")).toBe("MODULE_NOT_FOUND");
  });

  test("the cli installs alone with npm and runs pod prompt and pod check from node_modules/.bin", async () => {
    const dir = await consumerInstalled("consumer-npm");
    // Alone: the README's packages installed beside the CLI are all dependencies of it already.
    const cliManifest = JSON.parse(
      readFileSync(join(dir, "node_modules", "@insomnia", "cli", "package.json"), "utf8"),
    ) as {
      dependencies: Record<string, string>;
    };
    expect(README_PACKAGES.filter((name) => cliManifest.dependencies[name] === undefined)).toEqual([]);
    const workspace = join(work, "workspace");
    mkdirSync(join(workspace, ".insomnia", "prompts"), { recursive: true });
    writeFileSync(join(workspace, ".insomnia", "pod.yaml"), 'worker:\n  instruction: "$workspace/main"\n');
    writeFileSync(
      join(workspace, ".insomnia", "prompts", "main.md"),
      'Project rules for {{cwd}}.\n\n{{> "$insomnia/default"}}\n',
    );
    writeFileSync(join(workspace, "AGENTS.md"), "Run the tests with `make test`.\n");
    const home = join(work, "home");
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" };
    const pod = join(dir, "node_modules", ".bin", "pod");
    // The bin was built before `changeset version`: it must still print the version published.
    const published = await getJson(`${registry!.url}@insomnia%2fcli`);
    const latest = (published.body as { "dist-tags": { latest: string } })["dist-tags"].latest;
    expect(run(pod, ["--version"], { cwd: dir }).trim()).toBe(latest);

    const prompt = run(pod, ["prompt", "--cwd", workspace, "--now", "2026-01-02T03:04:05Z", "--tool", "read_file"], {
      cwd: dir,
      env,
    });
    expect(prompt.startsWith(`Project rules for ${workspace}.\n`)).toBe(true);
    expect(prompt).toContain("Today is 2026-01-02");
    expect(prompt).toContain(`## Working boundaries\n\nReadable:\n  - ${workspace}\nWritable:\n  - ${workspace}\n`);
    expect(prompt.endsWith("## Project instructions (AGENTS.md)\n\nRun the tests with `make test`.\n")).toBe(true);

    const check = spawnSync(pod, ["check", "--cwd", workspace], {
      cwd: dir,
      env: { ...hostEnv, ...env },
      encoding: "utf8",
    });
    expect(check.status).toBe(0);

    writeFileSync(join(workspace, ".insomnia", "prompts", "main.md"), "{{#if tools}}\nunclosed\n");
    const bad = spawnSync(pod, ["check", "--cwd", workspace], {
      cwd: dir,
      env: { ...hostEnv, ...env },
      encoding: "utf8",
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/main\.md:\d+:\d+: [A-Z_]+: /);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
