import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkWorkspaceTrust, loadManifest, ManifestError } from "@insomnia/manifest";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { CliError } from "./cli-error.ts";
import { apiKey, providerChoice } from "./provider-model.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "insomnia-provider-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * What `pod run` decides before it sends anything — the workspace trust check, providerChoice
 * and (with `key`) apiKey — for a workspace layer and optionally a user layer and overlays: the code thrown, or "ok".
 */
async function decide(
  workspace: string,
  options: { user?: string; overlays?: string[]; key?: boolean } = {},
): Promise<string> {
  const error = await decision(workspace, options);
  return error === undefined ? "ok" : error.code;
}

/** decide's error itself (undefined: "ok"), for its message and position. */
async function decision(
  workspace: string,
  options: { user?: string; overlays?: string[]; key?: boolean } = {},
): Promise<CliError | ManifestError | undefined> {
  const cwd = join(root, "ws");
  const xdg = join(root, "xdg");
  await mkdir(join(cwd, ".insomnia"), { recursive: true });
  await mkdir(join(xdg, "insomnia"), { recursive: true });
  await writeFile(join(cwd, ".insomnia", "pod.yaml"), workspace);
  if (options.user !== undefined) await writeFile(join(xdg, "insomnia", "pod.yaml"), options.user);
  const env = { HOME: join(root, "home"), XDG_CONFIG_HOME: xdg };
  const { manifest, origins } = await loadManifest({ cwd, env, overlays: options.overlays ?? [] });
  try {
    const io = { env, cwd } as never;
    checkWorkspaceTrust(manifest, { env });
    const choice = providerChoice(manifest, origins, io);
    if (options.key === true) await apiKey(choice, origins, io);
    return undefined;
  } catch (error) {
    if (CliError.is(error) || ManifestError.is(error)) return error;
    throw error;
  }
}

const provider = (kind: string, baseURL: string, extra = "") =>
  `provider:\n  kind: ${kind}\n  model: m\n  base_url: ${baseURL}\n${extra}`;

describe("where the workspace may send the key", () => {
  test("an_untrusted_checkout_may_name_this_machine", async () => {
    for (const url of [
      "http://127.0.0.1:8080/v1",
      "http://127.1.2.3/v1",
      "http://localhost:11434/v1",
      "http://localhost.:11434/v1",
      "http://[::1]:8000/v1",
      "http://[::ffff:127.0.0.1]:8000/v1",
    ]) {
      expect([url, await decide(provider("anthropic", url))]).toEqual([url, "ok"]);
    }
  });

  test("an_untrusted_checkout_may_not_send_requests_to_any_other_server_keyed_or_not", async () => {
    for (const [kind, url] of [
      ["anthropic", "https://api.anthropic.com/v1"],
      ["openai", "https://api.openai.com/v1"],
      ["openai-compatible", "https://llm.example.com/v1"],
      ["anthropic", "https://proxy.example.com/v1"],
      ["anthropic", "https://api.openai.com/v1"],
      ["openai", "https://api.anthropic.com/v1"],
      ["anthropic", "http://api.anthropic.com/v1"],
      ["anthropic", "http://0.0.0.0:8080/v1"],
      ["anthropic", "http://127.0.0.1.example.com/v1"],
      // Resolved by DNS, whatever it answers.
      ["anthropic", "http://api.localhost/v1"],
      ["anthropic", "http://user@evil.example/v1"],
      ["anthropic", "not a url"],
    ] as const) {
      expect([kind, url, await decide(provider(kind, url))]).toEqual([kind, url, "UNTRUSTED_WORKSPACE"]);
    }
    // A key file goes along too.
    expect(await decide(provider("openai-compatible", "https://llm.example.com/v1", "  api_key_file: key.txt\n"))).toBe(
      "UNTRUSTED_WORKSPACE",
    );
  });

  test("the_users_layers_may_name_any_server", async () => {
    const remote = "https://proxy.example.com/v1";
    expect(await decide("worker:\n  max_turns: 4\n", { user: provider("anthropic", remote) })).toBe("ok");
    expect(
      await decide(provider("anthropic", "http://127.0.0.1/v1"), { overlays: [`provider.base_url = ${remote}`] }),
    ).toBe("ok");
  });
});

describe("which file the workspace may send as the key", () => {
  const keyFile = (path: string) => `provider:\n  kind: anthropic\n  model: m\n  api_key_file: ${path}\n`;

  test("a_key_file_named_by_the_checkout_must_really_be_inside_it", async () => {
    await mkdir(join(root, "ws", ".insomnia"), { recursive: true });
    await writeFile(join(root, "ws", ".insomnia", "key.txt"), "sk-inside\n");
    await writeFile(join(root, "secret.txt"), "user:token@host\n");
    expect(await decide(keyFile("key.txt"), { key: true })).toBe("ok");
    expect(await decide(keyFile("../../secret.txt"), { key: true })).toBe("UNTRUSTED_WORKSPACE");
    expect(await decide(keyFile(join(root, "secret.txt")), { key: true })).toBe("UNTRUSTED_WORKSPACE");
    // A committed symlink to one of the user's files is outside, whatever its path says.
    await symlink(join(root, "secret.txt"), join(root, "ws", ".insomnia", "link.txt"));
    expect(await decide(keyFile("link.txt"), { key: true })).toBe("UNTRUSTED_WORKSPACE");
    // The user's own layer may name any file.
    expect(await decide("worker:\n  max_turns: 4\n", { user: keyFile(join(root, "secret.txt")), key: true })).toBe(
      "ok",
    );
  });

  test("a_key_file_that_is_not_a_small_regular_file_is_refused_without_hanging", async () => {
    await mkdir(join(root, "ws", ".insomnia"), { recursive: true });
    execFileSync("mkfifo", [join(root, "ws", ".insomnia", "fifo")]);
    expect(await decide(keyFile("fifo"), { key: true })).toBe("API_KEY_UNREADABLE");
    expect(await decide(keyFile("."), { key: true })).toBe("API_KEY_UNREADABLE");
    await writeFile(join(root, "ws", ".insomnia", "big.txt"), "k".repeat(64 * 1024 + 1));
    expect(await decide(keyFile("big.txt"), { key: true })).toBe("API_KEY_UNREADABLE");
    expect(await decide(keyFile("missing.txt"), { key: true })).toBe("API_KEY_UNREADABLE");
  });

  test("each_refusal_says_what_to_do_at_the_manifest_key_and_reads_nothing_it_refuses", async () => {
    const dir = join(root, "ws", ".insomnia");
    await mkdir(join(dir, "subdir"), { recursive: true });
    execFileSync("mkfifo", [join(dir, "fifo")]);
    await writeFile(join(dir, "big.txt"), "k".repeat(64 * 1024 + 1));
    await writeFile(join(root, "secret.txt"), "user:token@host\n");
    await symlink(join(root, "secret.txt"), join(dir, "link.txt"));
    const refusal = async (path: string) => {
      const error = await decision(keyFile(path), { key: true });
      return [error?.code, error?.message.replace(dir, "<dir>").replace(root, "<root>"), error?.line, error?.column];
    };
    expect(await refusal("fifo")).toEqual([
      "API_KEY_UNREADABLE",
      ".insomnia/pod.yaml:4:17: provider.api_key_file <dir>/fifo is not a regular file; point it at a file holding the key on one line",
      4,
      17,
    ]);
    expect((await refusal("subdir"))[1]).toBe(
      ".insomnia/pod.yaml:4:17: provider.api_key_file <dir>/subdir is not a regular file; point it at a file holding the key on one line",
    );
    expect((await refusal("big.txt"))[1]).toBe(
      ".insomnia/pod.yaml:4:17: provider.api_key_file <dir>/big.txt is larger than 64 KiB; it should hold only the key",
    );
    expect((await refusal("missing.txt"))[1]).toBe(
      ".insomnia/pod.yaml:4:17: provider.api_key_file <dir>/missing.txt cannot be read (ENOENT); create it with the key on one line, or fix the path",
    );
    const outside = await refusal("link.txt");
    expect(outside[0]).toBe("UNTRUSTED_WORKSPACE");
    expect(outside[1]).toMatch(
      /^\.insomnia\/pod\.yaml:4:17: provider\.api_key_file reads the API key from .*secret\.txt, outside the workspace /,
    );
    await writeFile(join(dir, "empty.txt"), " \n");
    expect(await refusal("empty.txt")).toEqual([
      "NO_API_KEY",
      ".insomnia/pod.yaml:4:17: provider.api_key_file <dir>/empty.txt is empty; put the anthropic API key in it",
      4,
      17,
    ]);
  });

  test("a_key_file_the_user_names_may_be_a_symlink_anywhere_but_never_a_fifo_or_directory", async () => {
    await mkdir(join(root, "keys"), { recursive: true });
    await writeFile(join(root, "keys", "real.txt"), "sk-user\n");
    await symlink(join(root, "keys", "real.txt"), join(root, "keys", "link.txt"));
    execFileSync("mkfifo", [join(root, "keys", "fifo")]);
    const user = (path: string) => decide("worker:\n  max_turns: 4\n", { user: keyFile(path), key: true });
    expect(await user(join(root, "keys", "link.txt"))).toBe("ok");
    expect(await user(join(root, "keys", "fifo"))).toBe("API_KEY_UNREADABLE");
    expect(await user(join(root, "keys"))).toBe("API_KEY_UNREADABLE");
  });
});
