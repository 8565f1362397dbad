import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { MAX_MANIFEST_BYTES } from "./defaults.ts";
import { loadManifest } from "./load-manifest.ts";
import { ManifestError } from "./manifest-error.ts";
import { manifestRejection } from "./__fixtures__/manifest-errors.ts";
import { userManifestPath } from "./manifest-paths.ts";

let root: string;
let xdg: string;
let home: string;
let cwd: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "insomnia-manifest-"));
  xdg = join(root, "xdg");
  home = join(root, "home");
  cwd = join(root, "project");
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, text: string | Buffer): Promise<string> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, text);
  return path;
}

describe("loadManifest", () => {
  test("no_files_gives_the_defaults", async () => {
    const { manifest, files } = await loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg, HOME: home } });
    expect(files).toEqual([]);
    expect(manifest.pod).toEqual({ name: "project", pwd: cwd });
    expect(manifest.worker.instruction).toBe("$insomnia/default");
    expect(manifest.scope.allow).toEqual([{ target: cwd, permission: "write", recursive: true }]);
  });

  test("user_then_project_then_overlays_scalars_upper_wins_rules_accumulate", async () => {
    const user = await put(
      join(xdg, "insomnia", "pod.yaml"),
      "worker:\n  max_turns: 5\n  max_tokens: 1000\nscope:\n  allow:\n    - {target: /usr/share, permission: read}\n  deny:\n    - {target: /usr/share/secret, permission: read}\n",
    );
    const project = await put(
      join(cwd, ".insomnia", "pod.yaml"),
      'worker:\n  max_turns: 9\n  instruction: "$workspace/review"\nscope:\n  allow:\n    - {target: ., permission: write}\n',
    );
    const { manifest, files } = await loadManifest({
      cwd,
      env: { XDG_CONFIG_HOME: xdg, HOME: home },
      overlays: ["worker.max_turns = 12", "scope.deny = [{target: .git, permission: write}]"],
    });
    expect(files).toEqual([user, project]);
    expect(manifest.worker).toEqual({
      instruction: "$workspace/review",
      max_tokens: 1000,
      max_turns: 12,
      compact_at: 0.8,
      compact_instruction: "$insomnia/compact",
      temperature: 0,
      tools: ["edit_file", "list_dir", "read_file", "write_file"],
      run_command: { timeout_ms: 120_000, network: false },
    });
    expect(manifest.scope).toEqual({
      allow: [
        { target: "/usr/share", permission: "read" },
        { target: ".", permission: "write" },
      ],
      deny: [
        { target: "/usr/share/secret", permission: "read" },
        { target: ".git", permission: "write" },
      ],
    });
  });

  test("user_layer_falls_back_to_home_config_when_xdg_is_unset_or_relative", async () => {
    const user = await put(join(home, ".config", "insomnia", "pod.yaml"), "pod:\n  name: from-home\n");
    for (const env of [{ HOME: home }, { HOME: home, XDG_CONFIG_HOME: "relative/xdg" }]) {
      const { manifest, files } = await loadManifest({ cwd, env });
      expect([manifest.pod.name, files]).toEqual(["from-home", [user]]);
    }
  });

  test("no_user_layer_without_an_absolute_home", async () => {
    // A relative HOME (and os.homedir() with it) would put the user layer inside the
    // repository: <cwd>/.config/insomnia/pod.yaml. It must not be read.
    const realHome = process.env.HOME;
    process.env.HOME = ".";
    try {
      expect(userManifestPath({ HOME: "." })).toBeUndefined();
      const cwd = await mkdtemp(join(tmpdir(), "insomnia-relhome-"));
      await mkdir(join(cwd, ".config", "insomnia"), { recursive: true });
      await writeFile(
        join(cwd, ".config", "insomnia", "pod.yaml"),
        "scope:\n  allow:\n    - target: /\n      permission: write\n",
      );
      const previous = process.cwd();
      process.chdir(cwd);
      try {
        const { manifest, files } = await loadManifest({ cwd, env: { HOME: "." } });
        expect(files).toEqual([]);
        expect(manifest.scope.allow).toEqual([{ target: resolve(cwd), permission: "write", recursive: true }]);
      } finally {
        process.chdir(previous);
        await rm(cwd, { recursive: true, force: true });
      }
    } finally {
      if (realHome === undefined) delete process.env.HOME;
      else process.env.HOME = realHome;
    }
  });

  test("user_manifest_path_falls_back_to_os_homedir_without_home", () => {
    expect(userManifestPath({})).toBe(join(homedir(), ".config", "insomnia", "pod.yaml"));
    expect(userManifestPath({ XDG_CONFIG_HOME: "/x" })).toBe("/x/insomnia/pod.yaml");
  });

  test("user_layer_false_skips_the_user_file", async () => {
    await put(join(xdg, "insomnia", "pod.yaml"), "pod:\n  name: user\n");
    const { manifest, files } = await loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg }, userLayer: false });
    expect([manifest.pod.name, files]).toEqual(["project", []]);
  });

  test("layer_pwd_becomes_pwd_and_default_allow_target", async () => {
    const other = join(root, "elsewhere");
    await put(join(cwd, ".insomnia", "pod.yaml"), `pod:\n  pwd: ${other}\n`);
    const { manifest } = await loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } });
    expect(manifest.pod).toEqual({ name: "elsewhere", pwd: other });
    expect(manifest.scope.allow).toEqual([{ target: other, permission: "write", recursive: true }]);
  });

  test("explicit_manifest_file_replaces_the_project_layer", async () => {
    await put(join(cwd, ".insomnia", "pod.yaml"), "pod:\n  name: default-file\n");
    const explicit = await put(join(cwd, "alt.yaml"), "pod:\n  name: alt\n");
    const { manifest, files } = await loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg }, manifestFile: "alt.yaml" });
    expect([manifest.pod.name, files]).toEqual(["alt", [explicit]]);
  });

  test("missing_explicit_manifest_file_is_an_error", async () => {
    const error = await manifestRejection(
      loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg }, manifestFile: "nope.yaml" }),
    );
    expect([error.code, error.file]).toEqual(["READ_FAILED", "nope.yaml"]);
    expect(error.message).toContain(join(cwd, "nope.yaml"));
  });

  test("project_error_names_the_project_file_with_line_and_column", async () => {
    await put(join(cwd, ".insomnia", "pod.yaml"), 'pod:\n  name: x\nworker:\n  instructions: "$user/foo"\n');
    const error = await manifestRejection(loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } }));
    expect(error.message).toBe(
      '.insomnia/pod.yaml:4:3: unknown key "instructions" in worker (did you mean "instruction"?)',
    );
  });

  test("user_error_names_the_absolute_user_file", async () => {
    const user = await put(join(xdg, "insomnia", "pod.yaml"), "worker:\n  max_turns: 1\n  max_turns: 2\n");
    const error = await manifestRejection(loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } }));
    expect([error.code, error.file, error.line, error.column]).toEqual(["YAML_DUPLICATE_KEY", user, 3, 3]);
  });

  test("single_overlay_error_is_labelled_dash_dash_overlay", async () => {
    const error = await manifestRejection(
      loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg }, overlays: ["worker.turns = 3"] }),
    );
    expect([error.code, error.file, error.column]).toEqual(["UNKNOWN_KEY", "--overlay", 8]);
  });

  test("second_of_several_overlays_is_labelled_by_number", async () => {
    const error = await manifestRejection(
      loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg }, overlays: ["worker.max_turns = 3", "worker.max_turns 4"] }),
    );
    expect([error.code, error.file]).toEqual(["INVALID_OVERLAY", "<overlay 2>"]);
  });

  test("symlinked_project_file_is_followed", async () => {
    const target = await put(join(root, "shared", "pod.yaml"), "pod:\n  name: linked\n");
    await mkdir(join(cwd, ".insomnia"), { recursive: true });
    await symlink(target, join(cwd, ".insomnia", "pod.yaml"));
    const { manifest } = await loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } });
    expect(manifest.pod.name).toBe("linked");
  });

  test("directory_in_place_of_the_project_file_is_read_failed", async () => {
    await mkdir(join(cwd, ".insomnia", "pod.yaml"), { recursive: true });
    const error = await manifestRejection(loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } }));
    expect([error.code, error.file]).toEqual(["READ_FAILED", ".insomnia/pod.yaml"]);
  });

  test.skipIf(process.platform === "win32")("fifo_in_place_of_the_project_file_fails_without_blocking", async () => {
    await mkdir(join(cwd, ".insomnia"), { recursive: true });
    execFileSync("mkfifo", [join(cwd, ".insomnia", "pod.yaml")]);
    const error = await manifestRejection(loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } }));
    expect(error.code).toBe("READ_FAILED");
  });

  test("file_over_the_size_cap_is_too_large", async () => {
    await put(join(cwd, ".insomnia", "pod.yaml"), `# ${"x".repeat(MAX_MANIFEST_BYTES)}\n`);
    const error = await manifestRejection(loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } }));
    expect([error.code, error.file]).toEqual(["TOO_LARGE", ".insomnia/pod.yaml"]);
  });

  test("invalid_utf8_is_read_failed", async () => {
    await put(join(cwd, ".insomnia", "pod.yaml"), Buffer.from([0x70, 0x6f, 0x64, 0x3a, 0x20, 0xff, 0x0a]));
    const error = await manifestRejection(loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } }));
    expect(error.code).toBe("READ_FAILED");
    expect(error.message).toContain("not valid UTF-8");
  });

  test("empty_project_file_is_an_empty_layer_but_is_listed", async () => {
    const project = await put(join(cwd, ".insomnia", "pod.yaml"), "");
    const { manifest, files } = await loadManifest({ cwd, env: { XDG_CONFIG_HOME: xdg } });
    expect([manifest.pod.name, files]).toEqual(["project", [project]]);
  });
});

describe("loadManifest origins", () => {
  const env = () => ({ XDG_CONFIG_HOME: xdg, HOME: home });

  test("origin_of_instruction_from_the_project_layer_points_at_the_value", async () => {
    await put(join(cwd, ".insomnia", "pod.yaml"), 'worker:\n  instruction: "$foo/x"\n  max_turns: 3\n');
    const { origins } = await loadManifest({ cwd, env: env() });
    expect(origins["worker.instruction"]).toMatchObject({ file: ".insomnia/pod.yaml", line: 2, column: 16 });
    expect(origins["worker.max_turns"]).toMatchObject({ file: ".insomnia/pod.yaml", line: 3, column: 14 });
  });

  test("origin_of_instruction_from_the_user_layer_is_the_absolute_path", async () => {
    const user = await put(join(xdg, "insomnia", "pod.yaml"), "# mine\nworker:\n    instruction: $user/main\n");
    await put(join(cwd, ".insomnia", "pod.yaml"), "worker:\n  max_turns: 4\n");
    const { origins } = await loadManifest({ cwd, env: env() });
    expect(origins["worker.instruction"]).toMatchObject({ file: user, line: 3, column: 18 });
    expect(origins["worker.max_turns"]).toMatchObject({ file: ".insomnia/pod.yaml", line: 2, column: 14 });
  });

  test("origin_of_instruction_set_by_an_overlay_wins_over_the_files", async () => {
    await put(join(xdg, "insomnia", "pod.yaml"), "worker:\n  instruction: $user/a\n");
    await put(join(cwd, ".insomnia", "pod.yaml"), "worker:\n  instruction: $workspace/b\n");
    const one = await loadManifest({ cwd, env: env(), overlays: ['worker.instruction = "$user/x.md"'] });
    expect(one.origins["worker.instruction"]).toMatchObject({ file: "--overlay", line: 1, column: 22 });
    const two = await loadManifest({
      cwd,
      env: env(),
      overlays: ["worker.max_turns = 2", "worker = {instruction: $user/c}"],
    });
    expect(two.origins["worker.instruction"]).toMatchObject({ file: "<overlay 2>", line: 1, column: 24 });
    expect(two.origins["worker.max_turns"]).toMatchObject({ file: "<overlay 1>", line: 1, column: 20 });
  });

  test("explicit_manifest_file_origin_is_named_as_given", async () => {
    await put(join(cwd, "alt.yaml"), "worker:\n  instruction: $workspace/alt\n");
    const { origins } = await loadManifest({ cwd, env: env(), manifestFile: "alt.yaml" });
    expect(origins["worker.instruction"]).toMatchObject({ file: "alt.yaml", line: 2, column: 16 });
  });

  test("defaulted_keys_have_no_origin", async () => {
    const none = await loadManifest({ cwd, env: env() });
    expect(none.origins).toEqual({});
    await put(join(cwd, ".insomnia", "pod.yaml"), "pod:\n  name: x\n");
    const { origins, manifest } = await loadManifest({ cwd, env: env() });
    expect(manifest.worker.instruction).toBe("$insomnia/default");
    expect(origins["worker.instruction"]).toBeUndefined();
    expect(origins["pod.pwd"]).toBeUndefined();
    expect(Object.keys(origins)).toEqual(["pod.name"]);
    expect(Object.isFrozen(origins)).toBe(true);
  });

  test("scope_rule_origins_are_numbered_as_in_the_merged_manifest", async () => {
    const user = await put(
      join(xdg, "insomnia", "pod.yaml"),
      "scope:\n  allow:\n    - {target: /usr/share, permission: read}\n",
    );
    await put(join(cwd, ".insomnia", "pod.yaml"), "scope:\n  allow:\n    - target: .\n      permission: write\n");
    const { origins, manifest } = await loadManifest({
      cwd,
      env: env(),
      overlays: ["scope.allow = [{target: /opt, permission: read}]"],
    });
    expect(manifest.scope.allow.map((rule) => rule.target)).toEqual(["/usr/share", ".", "/opt"]);
    expect(origins["scope.allow[0].target"]).toMatchObject({ file: user, line: 3, column: 16 });
    expect(origins["scope.allow[1].target"]).toMatchObject({ file: ".insomnia/pod.yaml", line: 3, column: 15 });
    expect(origins["scope.allow[1].permission"]).toMatchObject({ file: ".insomnia/pod.yaml", line: 4, column: 19 });
    expect(origins["scope.allow[2].target"]).toMatchObject({ file: "--overlay", line: 1, column: 25 });
  });
});

describe("resolve-time problems", () => {
  test("a_provider_block_without_a_model_points_at_the_layer_that_set_the_block", async () => {
    const dir = await mkdtemp(join(tmpdir(), "provider-"));
    await mkdir(join(dir, ".insomnia"));
    await writeFile(join(dir, ".insomnia", "pod.yaml"), "worker:\n  max_turns: 3\nprovider:\n  kind: anthropic\n");
    const error = await loadManifest({ cwd: dir, userLayer: false }).catch((caught: unknown) => caught);
    expect(ManifestError.is(error)).toBe(true);
    const { code, file, line, column, key, message } = error as ManifestError;
    expect({ code, file, line, column, key }).toEqual({
      code: "INVALID_VALUE",
      file: ".insomnia/pod.yaml",
      line: 3,
      column: 1,
      key: "provider.model",
    });
    expect(message).toMatch(/^\.insomnia\/pod\.yaml:3:1: provider\.model is required/);
    await rm(dir, { recursive: true });
  });

  test("a_provider_block_from_an_overlay_points_at_the_overlay", async () => {
    const dir = await mkdtemp(join(tmpdir(), "provider-"));
    const error = await loadManifest({ cwd: dir, userLayer: false, overlays: ['provider.model = "m"'] }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "INVALID_VALUE", file: "--overlay", line: 1, key: "provider.kind" });
    await rm(dir, { recursive: true });
  });
});

describe("scope targets under ~", () => {
  test("tilde_targets_are_the_home_directory_as_for_api_key_file", async () => {
    await put(
      join(cwd, ".insomnia", "pod.yaml"),
      'scope:\n  allow:\n    - target: ~/notes\n      permission: read\n    - target: "~"\n      permission: read\n  deny:\n    - target: ~/notes/private\n      permission: read\n',
    );
    const { manifest } = await loadManifest({ cwd, env: { HOME: home }, userLayer: false });
    expect(manifest.scope.allow.map((r) => r.target)).toEqual([join(home, "notes"), home]);
    expect(manifest.scope.deny.map((r) => r.target)).toEqual([join(home, "notes", "private")]);
  });

  test("a_tilde_target_without_a_home_or_naming_another_user_is_refused_at_the_value", async () => {
    await put(join(cwd, ".insomnia", "pod.yaml"), "scope:\n  allow:\n    - target: ~/notes\n      permission: read\n");
    const noHome = await loadManifest({ cwd, env: {}, userLayer: false }).catch((caught: unknown) => caught);
    expect(noHome).toMatchObject({
      code: "INVALID_VALUE",
      file: ".insomnia/pod.yaml",
      line: 3,
      column: 15,
      key: "scope.allow[0].target",
    });
    expect((noHome as ManifestError).detail).toMatch(/no home directory is known/);
    await put(
      join(cwd, ".insomnia", "pod.yaml"),
      "scope:\n  allow:\n    - target: ~bob/notes\n      permission: read\n",
    );
    const other = await loadManifest({ cwd, env: { HOME: home }, userLayer: false }).catch((caught: unknown) => caught);
    expect(other).toMatchObject({ code: "INVALID_VALUE", key: "scope.allow[0].target" });
    expect((other as ManifestError).detail).toMatch(/not ~user/);
  });
});
