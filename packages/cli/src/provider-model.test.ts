import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest } from "@insomnia/manifest";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { CliError } from "./cli-error.ts";
import { providerChoice } from "./provider-model.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "insomnia-provider-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** providerChoice for a workspace layer (and optionally a user layer and overlays): the code it throws, or "ok". */
async function decide(workspace: string, options: { user?: string; overlays?: string[] } = {}): Promise<string> {
  const cwd = join(root, "ws");
  const xdg = join(root, "xdg");
  await mkdir(join(cwd, ".insomnia"), { recursive: true });
  await mkdir(join(xdg, "insomnia"), { recursive: true });
  await writeFile(join(cwd, ".insomnia", "pod.yaml"), workspace);
  if (options.user !== undefined) await writeFile(join(xdg, "insomnia", "pod.yaml"), options.user);
  const env = { HOME: join(root, "home"), XDG_CONFIG_HOME: xdg };
  const { manifest, origins, files } = await loadManifest({ cwd, env, overlays: options.overlays ?? [] });
  try {
    providerChoice(manifest, origins, files, { env, cwd } as never);
    return "ok";
  } catch (error) {
    if (CliError.is(error)) return error.code;
    throw error;
  }
}

const provider = (kind: string, baseURL: string, extra = "") =>
  `provider:\n  kind: ${kind}\n  model: m\n  base_url: ${baseURL}\n${extra}`;

describe("where the workspace may send the key", () => {
  test("a_checkout_may_name_this_machine_or_the_providers_own_api", async () => {
    for (const url of [
      "http://127.0.0.1:8080/v1",
      "http://127.1.2.3/v1",
      "http://localhost:11434/v1",
      "http://api.localhost/v1",
      "http://[::1]:8000/v1",
    ]) {
      expect([url, await decide(provider("anthropic", url))]).toEqual([url, "ok"]);
    }
    expect(await decide(provider("anthropic", "https://api.anthropic.com/v1"))).toBe("ok");
    expect(await decide(provider("openai", "https://api.openai.com/v1"))).toBe("ok");
  });

  test("a_checkout_may_not_send_a_key_to_any_other_server", async () => {
    for (const [kind, url] of [
      ["anthropic", "https://proxy.example.com/v1"],
      ["anthropic", "https://api.openai.com/v1"],
      ["openai", "https://api.anthropic.com/v1"],
      ["anthropic", "http://api.anthropic.com/v1"],
      ["anthropic", "http://0.0.0.0:8080/v1"],
      ["anthropic", "http://127.0.0.1.example.com/v1"],
      ["anthropic", "not a url"],
    ] as const) {
      expect([kind, url, await decide(provider(kind, url))]).toEqual([kind, url, "UNTRUSTED_BASE_URL"]);
    }
    // A key file goes along too.
    expect(await decide(provider("openai-compatible", "https://llm.example.com/v1", "  api_key_file: key.txt\n"))).toBe(
      "UNTRUSTED_BASE_URL",
    );
  });

  test("the_users_layers_may_name_any_server_and_keyless_servers_need_no_trust", async () => {
    const remote = "https://proxy.example.com/v1";
    expect(await decide("worker:\n  max_turns: 4\n", { user: provider("anthropic", remote) })).toBe("ok");
    expect(
      await decide(provider("anthropic", "http://127.0.0.1/v1"), { overlays: [`provider.base_url = ${remote}`] }),
    ).toBe("ok");
    expect(await decide(provider("openai-compatible", remote))).toBe("ok");
  });
});
