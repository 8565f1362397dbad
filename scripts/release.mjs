// `pnpm release`: build, version every package with pending changesets, and publish to
// the private registry the environment names.
//
//   INSOMNIA_REGISTRY=https://npm.example.internal/ pnpm release
//
// The registry is passed to npm/pnpm as the scoped setting `@insomnia:registry`; no
// package.json names one, so a tarball never points consumers at a developer's registry.
// Authentication comes from the usual npm config (`//host/:_authToken=...` in .npmrc or
// NPM_CONFIG_USERCONFIG).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const registry = process.env.INSOMNIA_REGISTRY ?? process.env["npm_config_@insomnia:registry"];
if (!registry) {
  console.error(
    "release: no registry named. Set INSOMNIA_REGISTRY (e.g. INSOMNIA_REGISTRY=http://127.0.0.1:4873/ pnpm release).",
  );
  process.exit(2);
}
// pnpm publishes under the `latest` tag: changesets' pre-release mode would put a pre-release there.
if (existsSync(new URL("../.changeset/pre.json", import.meta.url))) {
  console.error(
    "release: .changeset/pre.json is there (changesets' pre-release mode), which this script does not publish. Leave it with `pnpm changeset pre exit` first.",
  );
  process.exit(2);
}
const env = { ...process.env, "npm_config_@insomnia:registry": registry };
// Run changesets with node directly: going through `pnpm exec` would rebuild the npm_config_*
// environment and drop the scoped registry setting.
const changeset = createRequire(import.meta.url).resolve("@changesets/cli/bin.js");

function run(command, args) {
  console.error(`release: ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, env, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`release: \`${command} ${args.join(" ")}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(1);
  }
}

// Built before versioning: no build output depends on a version (the CLI reads its own from
// package.json), so turbo serves the build the tests just ran instead of building it again.
run("pnpm", ["run", "build"]);
const pending = readdirSync(new URL("../.changeset/", import.meta.url)).filter(
  (f) => f.endsWith(".md") && f !== "README.md",
);
if (pending.length > 0) {
  run(process.execPath, [changeset, "version"]);
} else {
  console.error("release: no pending changesets; publishing the current versions.");
}
// pnpm publishes every package whose version the registry does not have yet, in one process,
// turning `workspace:^` into real ranges (pnpm.io/using-changesets). The checkout is not
// committed between versioning and publishing, hence --no-git-checks (as `changeset publish`
// passed it). `changeset tag` then tags each package's current version in git, keeping tags
// that exist: after a publish that stopped partway, running this again publishes the rest and
// tags them all.
run("pnpm", ["publish", "--recursive", "--no-git-checks"]);
run(process.execPath, [changeset, "tag"]);
