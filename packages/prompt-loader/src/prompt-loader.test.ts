import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { rejectionOf, tempDirs } from "./__fixtures__/temp-dir.ts";
import { sha256Hex } from "./sha256.ts";
import { PromptLoader } from "./prompt-loader.ts";
import { PromptLoaderError, type PromptLoaderErrorCode } from "./prompt-loader-error.ts";
import { parseRef } from "./prompt-ref.ts";

const temp = tempDirs();
afterEach(() => temp.cleanup());

const hasMkfifo = (() => {
  try {
    execFileSync("mkfifo", ["--version"], { stdio: "ignore" });
    return true;
  } catch (error) {
    return (error as { code?: string }).code !== "ENOENT";
  }
})();
const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

async function write(file: string, content: string | Uint8Array): Promise<void> {
  await mkdir(join(file, ".."), { recursive: true });
  await writeFile(file, content);
}

/** A temp dir with user/, workspace/ and builtin/ roots and a secret outside all of them. */
async function setup(maxBytes?: number) {
  const base = await temp.make();
  const dirs = { user: join(base, "user"), workspace: join(base, "workspace"), builtin: join(base, "builtin") };
  for (const dir of Object.values(dirs)) await mkdir(dir);
  await write(join(base, "secret.md"), "TOP SECRET");
  const loader = new PromptLoader({
    userDir: dirs.user,
    workspaceDir: dirs.workspace,
    builtinDir: dirs.builtin,
    ...(maxBytes === undefined ? {} : { maxBytes }),
  });
  return { base, ...dirs, loader };
}

async function failure(promise: Promise<unknown>, code: PromptLoaderErrorCode): Promise<PromptLoaderError> {
  const error = await rejectionOf(promise);
  expect(PromptLoaderError.is(error)).toBe(true);
  expect((error as PromptLoaderError).code).toBe(code);
  return error as PromptLoaderError;
}

describe("PromptLoader.load", () => {
  it("instruction_prefix_addressing_insomnia_user_workspace", async () => {
    const { user, workspace, builtin, loader } = await setup();
    await write(join(builtin, "default.md"), "builtin");
    await write(join(user, "style.md"), "user");
    await write(join(workspace, "team", "review.md"), "workspace");
    const results = await Promise.all(
      ["$insomnia/default", "$user/style", "$workspace/team/review"].map((r) => loader.load(r)),
    );
    expect(results.map((r) => [r.ref.canonical, r.text, r.file])).toEqual([
      ["$insomnia/default", "builtin", join(builtin, "default.md")],
      ["$user/style", "user", join(user, "style.md")],
      ["$workspace/team/review", "workspace", join(workspace, "team", "review.md")],
    ]);
    expect(results[0]?.sha256).toBe(sha256Hex("builtin"));
  });

  it("a_loaded_prompt_is_frozen_and_its_hash_a_plain_enumerable_value", async () => {
    const { user, loader } = await setup();
    await write(join(user, "h.md"), "hash me");
    const loaded = await loader.load("$user/h");
    // The hash is computed when first read, but reads like any other field: in spreads and JSON too.
    expect(Object.isFrozen(loaded)).toBe(true);
    expect(Object.keys(loaded)).toEqual(["ref", "text", "file", "sha256"]);
    expect({ ...loaded }.sha256).toBe(sha256Hex("hash me"));
    expect(JSON.parse(JSON.stringify(loaded)).sha256).toBe(sha256Hex("hash me"));
    expect(loaded.sha256).toBe(loaded.sha256);
  });

  it("accepts_a_parsed_ref_and_rejects_a_forged_one", async () => {
    const { user, loader } = await setup();
    await write(join(user, "a", "b.md"), "ab");
    expect((await loader.load(parseRef("b", parseRef("$user/a/x")))).text).toBe("ab");
    const forged = { prefix: "$user", path: "../secret", canonical: "$user/../secret" } as const;
    expect((await failure(loader.load(forged), "INVALID_REF")).index).toBe(6);
    await failure(loader.load(null as unknown as string), "INVALID_REF");
  });

  it("normalizes_bom_and_crlf_so_every_os_gets_the_same_text", async () => {
    const { user, loader } = await setup();
    await write(join(user, "crlf.md"), "\ufeffline 1\r\nline 2\rline 3\n");
    await write(join(user, "lf.md"), "line 1\nline 2\nline 3\n");
    const [crlf, lf] = await Promise.all([loader.load("$user/crlf"), loader.load("$user/lf")]);
    expect(crlf.text).toBe("line 1\nline 2\nline 3\n");
    expect(crlf.sha256).toBe(lf.sha256);
    expect(crlf.sha256).toBe(sha256Hex("line 1\nline 2\nline 3\n"));
  });

  it("follows_symlinks_that_stay_inside_the_root", async () => {
    const { base, user, loader } = await setup();
    await write(join(user, "real", "x.md"), "inside");
    await symlink("real/x.md", join(user, "alias.md"));
    await symlink("real", join(user, "dir-alias"));
    await symlink(user, join(base, "user-link"));
    expect((await loader.load("$user/alias")).file).toBe(join(user, "real", "x.md"));
    expect((await loader.load("$user/dir-alias/x")).text).toBe("inside");
    const viaLinkedRoot = new PromptLoader({ userDir: join(base, "user-link") });
    expect((await viaLinkedRoot.load("$user/real/x")).file).toBe(join(user, "real", "x.md"));
  });

  it("prefix_not_configured", async () => {
    const error = await failure(new PromptLoader().load("$user/x"), "PREFIX_NOT_CONFIGURED");
    expect(error.ref).toBe("$user/x");
    expect(error.message).toContain("userDir");
  });

  it("string_refs_without_prefix_are_unqualified_without_current", async () => {
    const { loader } = await setup();
    await failure(loader.load("default"), "UNQUALIFIED_WITHOUT_CURRENT");
    await failure(loader.load("$foo/x"), "UNKNOWN_PREFIX");
  });

  it("prefix_with_missing_file_is_hard_error", async () => {
    const { workspace, builtin, loader } = await setup();
    await write(join(builtin, "foo.md"), "builtin foo must not be used");
    const error = await failure(loader.load("$workspace/foo"), "NOT_FOUND");
    expect(error.file).toBe(join(workspace, "foo.md"));
    expect(error.ref).toBe("$workspace/foo");
    expect(error.message.startsWith(`$workspace/foo: no file at ${join(workspace, "foo.md")}`)).toBe(true);
  });

  it("a_missing_file_with_a_close_name_beside_it_gets_a_did_you_mean", async () => {
    const { workspace, loader } = await setup();
    await write(join(workspace, "team", "review.md"), "r");
    const error = await failure(loader.load("$workspace/team/reveiw"), "NOT_FOUND");
    expect(error.message).toContain('reveiw.md (did you mean "$workspace/team/review"?)');
    const far = await failure(loader.load("$workspace/team/unrelated"), "NOT_FOUND");
    expect(far.message).not.toContain("did you mean");
  });

  it("missing_root_is_not_found_without_fallthrough", async () => {
    const { base, builtin } = await setup();
    await write(join(builtin, "x.md"), "builtin x");
    const missing = join(base, "nope", "prompts");
    const loader = new PromptLoader({ userDir: missing, builtinDir: builtin });
    const error = await failure(loader.load("$user/x"), "NOT_FOUND");
    expect(error.file).toBe(join(missing, "x.md"));
    expect(error.message).toContain(`no file at ${join(missing, "x.md")}`);
  });

  it("path_through_a_file_is_not_found", async () => {
    const { user, loader } = await setup();
    await write(join(user, "a.md"), "a");
    await write(join(user, "a"), "a plain file named like a directory");
    expect((await failure(loader.load("$user/a/b"), "NOT_FOUND")).file).toBe(join(user, "a", "b.md"));
  });

  it("symlink_out_of_the_root_is_path_escape", async () => {
    const { base, user, loader } = await setup();
    await symlink(join(base, "secret.md"), join(user, "abs.md"));
    await symlink("../secret.md", join(user, "rel.md"));
    await symlink(base, join(user, "up"));
    await write(join(base, "user-evil", "s.md"), "sibling secret");
    await symlink("../user-evil", join(user, "sib"));
    for (const ref of ["$user/abs", "$user/rel", "$user/up/secret", "$user/sib/s"]) {
      const error = await failure(loader.load(ref), "PATH_ESCAPE");
      expect(error.ref).toBe(ref);
      expect(error.message).not.toContain("TOP SECRET");
      expect(error.message).toContain("outside the prompts directory");
    }
  });

  it("device_via_symlink_is_path_escape", async () => {
    const { user, loader } = await setup();
    await symlink("/dev/null", join(user, "null.md"));
    const error = await failure(loader.load("$user/null"), "PATH_ESCAPE");
    expect(error.message).toContain("/dev/null");
  });

  it("directory_named_x_md_is_not_a_file", async () => {
    const { user, loader } = await setup();
    await mkdir(join(user, "x.md"));
    const error = await failure(loader.load("$user/x"), "NOT_A_FILE");
    expect(error.message).toContain("a directory");
    expect(error.file).toBe(join(user, "x.md"));
  });

  it.skipIf(!hasMkfifo)("fifo_inside_the_root_is_not_a_file_and_never_blocks", async () => {
    const { user, loader } = await setup();
    execFileSync("mkfifo", [join(user, "pipe.md")]);
    await symlink("pipe.md", join(user, "pipe-link.md"));
    // No writer ever opens the FIFO: if load opened it blocking, this await would never finish.
    expect((await failure(loader.load("$user/pipe"), "NOT_A_FILE")).message).toContain("FIFO");
    expect((await failure(loader.load("$user/pipe-link"), "NOT_A_FILE")).message).toContain("FIFO");
  });

  it("socket_inside_the_root_is_not_a_file", async () => {
    const { user, loader } = await setup();
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(join(user, "sock.md"), resolve));
    try {
      expect((await failure(loader.load("$user/sock"), "NOT_A_FILE")).message).toContain("a socket");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("symlink_loop_is_not_a_file", async () => {
    const { user, loader } = await setup();
    await symlink("b.md", join(user, "a.md"));
    await symlink("a.md", join(user, "b.md"));
    await symlink("self.md", join(user, "self.md"));
    for (const ref of ["$user/a", "$user/self"]) {
      expect((await failure(loader.load(ref), "NOT_A_FILE")).message).toContain("symlink loop");
    }
  });

  it("file_over_max_bytes_is_too_large", async () => {
    const { user, loader } = await setup(10);
    await write(join(user, "ten.md"), "0123456789");
    await write(join(user, "eleven.md"), "0123456789A");
    expect((await loader.load("$user/ten")).text).toBe("0123456789");
    const error = await failure(loader.load("$user/eleven"), "TOO_LARGE");
    expect(error.message).toContain("11 bytes");
    expect(error.message).toContain("limit of 10 bytes");
  });

  it("default_cap_is_one_mebibyte", async () => {
    const { user, loader } = await setup();
    await write(join(user, "exact.md"), "a".repeat(1024 * 1024));
    await write(join(user, "over.md"), "a".repeat(1024 * 1024 + 1));
    expect((await loader.load("$user/exact")).text).toHaveLength(1024 * 1024);
    await failure(loader.load("$user/over"), "TOO_LARGE");
    expect(() => new PromptLoader({ maxBytes: -1 })).toThrow(RangeError);
  });

  it("invalid_utf8_is_bad_encoding_with_byte_offset", async () => {
    const { user, loader } = await setup();
    await write(join(user, "latin1.md"), new Uint8Array([0x68, 0x69, 0x20, 0xe9, 0x0a]));
    const error = await failure(loader.load("$user/latin1"), "BAD_ENCODING");
    expect(error.byteOffset).toBe(3);
    expect(error.message).toContain("offset 3");
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("load_is_async_and_failures_reject_instead_of_throwing", async () => {
    const { user, loader } = await setup(4);
    await write(join(user, "big.md"), "12345");
    let thrown: unknown;
    let pending: Promise<unknown> | undefined;
    try {
      pending = loader.load("$user/big");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeUndefined();
    expect(pending).toBeInstanceOf(Promise);
    await failure(pending as Promise<unknown>, "TOO_LARGE");
  });

  it.skipIf(!existsSync("/proc/self/fd"))("descriptors_are_closed_after_success_and_failure", async () => {
    const { user, loader } = await setup(1000);
    await write(join(user, "ok.md"), "fine");
    await write(join(user, "bad.md"), new Uint8Array([0xff]));
    await write(join(user, "big.md"), "x".repeat(2000));
    const open = () => readdirSync("/proc/self/fd").length;
    const before = open();
    for (let i = 0; i < 50; i++) {
      expect((await loader.load("$user/ok")).text).toBe("fine");
      await failure(loader.load("$user/bad"), "BAD_ENCODING");
      await failure(loader.load("$user/big"), "TOO_LARGE");
    }
    expect(open()).toBe(before);
  });

  it("os_errors_are_read_failed_with_cause", async () => {
    const { loader } = await setup();
    // A 300-character segment is a valid reference but longer than any file name the OS allows.
    const error = await failure(loader.load(`$user/${"a".repeat(300)}`), "READ_FAILED");
    expect((error.cause as { code?: string }).code).toBe("ENAMETOOLONG");
  });

  it.skipIf(isRoot)("unreadable_file_is_read_failed", async () => {
    const { user, loader } = await setup();
    await write(join(user, "locked.md"), "x");
    await chmod(join(user, "locked.md"), 0o000);
    const error = await failure(loader.load("$user/locked"), "READ_FAILED");
    expect((error.cause as { code?: string }).code).toBe("EACCES");
  });
});

describe("PromptLoader.forPod", () => {
  it("uses_xdg_config_home_when_absolute", () => {
    const loader = PromptLoader.forPod({ cwd: "/pod", env: { XDG_CONFIG_HOME: "/xdg", HOME: "/home/me" } });
    expect(loader.rootOf("$user")).toBe("/xdg/insomnia/prompts");
    expect(loader.rootOf("$workspace")).toBe("/pod/.insomnia/prompts");
  });

  it("falls_back_to_home_config_when_xdg_is_unset_empty_or_relative", () => {
    for (const env of [
      { HOME: "/home/me" },
      { HOME: "/home/me", XDG_CONFIG_HOME: "" },
      { HOME: "/home/me", XDG_CONFIG_HOME: "cfg" },
    ]) {
      expect(PromptLoader.forPod({ cwd: "/pod", env }).rootOf("$user")).toBe("/home/me/.config/insomnia/prompts");
    }
    expect(PromptLoader.forPod({ cwd: "/pod", env: {} }).rootOf("$user")).toBe(
      join(homedir(), ".config", "insomnia", "prompts"),
    );
  });

  it("loads_workspace_and_user_prompts_from_a_real_pod_layout", async () => {
    const base = await temp.make();
    const cwd = join(base, "project");
    await write(join(cwd, ".insomnia", "prompts", "custom.md"), "workspace custom");
    await write(join(base, "xdg", "insomnia", "prompts", "my-style.md"), "user style");
    const loader = PromptLoader.forPod({ cwd, env: { XDG_CONFIG_HOME: join(base, "xdg") } });
    expect((await loader.load("$workspace/custom")).text).toBe("workspace custom");
    expect((await loader.load("$user/my-style")).file).toBe(
      await realpath(join(base, "xdg", "insomnia", "prompts", "my-style.md")),
    );
  });
});

describe("the $app root", () => {
  it("an_application_names_its_own_prompt_folder_and_it_follows_every_root_rule", async () => {
    const base = await temp.make();
    const app = join(base, "app-prompts");
    await write(join(app, "support", "agent.md"), "Support agent for {{cwd}}.\n");
    await write(join(base, "outside.md"), "SECRET");
    await symlink(join(base, "outside.md"), join(app, "escape.md"));
    const loader = PromptLoader.forPod({ cwd: base, env: { HOME: base }, appDir: app });
    const loaded = await loader.load("$app/support/agent");
    expect([loaded.text, loaded.file, loaded.ref.canonical]).toEqual([
      "Support agent for {{cwd}}.\n",
      join(await realpath(app), "support", "agent.md"),
      "$app/support/agent",
    ]);
    // Same containment as the other roots: no symlink out, no "..", no absolute path.
    await failure(loader.load("$app/escape"), "PATH_ESCAPE");
    await failure(loader.load("$app/../outside"), "INVALID_REF");
    // An unqualified include inside an $app file stays in $app.
    expect(parseRef("header", parseRef("$app/support/agent")).canonical).toBe("$app/support/header");
  });

  it("without_an_app_dir_the_prefix_is_not_configured_and_names_the_option", async () => {
    const error = await failure(PromptLoader.forPod({ cwd: "/" }).load("$app/x"), "PREFIX_NOT_CONFIGURED");
    expect(error.message).toMatch(/no directory is configured for \$app; pass appDir/);
  });
});
