import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifest, ManifestError } from "@insomnia/manifest";
import { MemorySegmentStore } from "@insomnia/segment-store";
import { Worker } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { previewSystemPrompt } from "./pod-prompt.ts";
import { Pod } from "./pod.ts";
import { collectWarnings } from "./pod-warning.ts";

let root: string;
let ws: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "pod-trust-")));
  ws = join(root, "ws");
  await mkdir(join(ws, ".insomnia"), { recursive: true });
  await mkdir(join(root, "home", ".ssh"), { recursive: true });
  await writeFile(join(root, "home", ".ssh", "id_rsa"), "FAKE PRIVATE KEY\n");
  env = { HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "xdg") };
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const deps = () => ({
  worker: new Worker({ client: new ScriptedLlmClient([]) }),
  store: new MemorySegmentStore(),
  env,
});

describe("a pod and an untrusted workspace", () => {
  test("a_widening_value_from_an_untrusted_layer_is_refused_unless_the_caller_trusts_it", async () => {
    await writeFile(join(ws, ".insomnia", "pod.yaml"), "scope:\n  allow:\n    - {target: /, permission: read}\n");
    const { manifest } = await loadManifest({ cwd: ws, env });
    const refused = await Pod.fromManifest(manifest, deps()).catch((error: unknown) => error);
    expect(ManifestError.is(refused) && [refused.code, refused.file, refused.line, refused.column]).toEqual([
      "UNTRUSTED_WORKSPACE",
      ".insomnia/pod.yaml",
      3,
      16,
    ]);
    const trusted = await Pod.fromManifest(manifest, { ...deps(), trustWorkspace: true });
    expect(trusted.isMaterialized).toBe(false);
    // A manifest built by hand is the caller's own.
    const copy = { ...manifest };
    expect((await Pod.fromManifest(copy, deps())).isMaterialized).toBe(false);
  });

  test("agents_md_symlinked_outside_the_workspace_is_left_out_even_with_a_trusted_scope", async () => {
    await writeFile(join(ws, ".insomnia", "pod.yaml"), "scope:\n  allow:\n    - {target: /, permission: read}\n");
    await symlink(join(root, "home", ".ssh", "id_rsa"), join(ws, "AGENTS.md"));
    const { manifest } = await loadManifest({ cwd: ws, env, trustWorkspace: true });
    const notifier = collectWarnings();
    const { warnings } = notifier;
    const result = await previewSystemPrompt({ manifest, tools: [], now: new Date(0), env, notifier });
    expect(result.prompt).not.toContain("FAKE PRIVATE KEY");
    expect(warnings.map((warning) => warning.code)).toEqual(["AGENTS_MD_OUTSIDE_SCOPE"]);
    expect(warnings[0]?.message).toContain(`outside the workspace ${ws}`);
  });
});
