import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PodManifest } from "@insomnia/manifest";
import type { Clock } from "../clock.ts";

/** A pod directory in a fresh temp root: `<root>/pod` (the pwd), `<root>/xdg`, `<root>/outside`. */
export interface PodDir {
  root: string;
  pwd: string;
  outside: string;
  env: NodeJS.ProcessEnv;
  manifest: PodManifest;
  /** Writes `<pwd>/.insomnia/prompts/<name>.md`. */
  writePrompt(name: string, text: string): Promise<string>;
  cleanup(): Promise<void>;
}

/** Creates a pod directory whose instruction is `$workspace/main` with the given text. */
export async function makePodDir(
  instruction: string,
  options: { agentsMd?: string | Uint8Array } = {},
): Promise<PodDir> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "insomnia-pod-")));
  const pwd = join(root, "pod");
  const outside = join(root, "outside");
  await mkdir(join(pwd, ".insomnia", "prompts"), { recursive: true });
  await mkdir(join(root, "xdg"), { recursive: true });
  await mkdir(outside, { recursive: true });
  const writePrompt = async (name: string, text: string): Promise<string> => {
    const file = join(pwd, ".insomnia", "prompts", `${name}.md`);
    await writeFile(file, text);
    return file;
  };
  await writePrompt("main", instruction);
  if (options.agentsMd !== undefined) await writeFile(join(pwd, "AGENTS.md"), options.agentsMd);
  const manifest: PodManifest = {
    pod: { name: "test", pwd },
    worker: { instruction: "$workspace/main", max_tokens: 1024, max_turns: 8, temperature: 0, tools: [] },
    scope: { allow: [{ target: ".", permission: "write" }], deny: [] },
  };
  return {
    root,
    pwd,
    outside,
    env: { XDG_CONFIG_HOME: join(root, "xdg") },
    manifest,
    writePrompt,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** A clock that returns a fixed time and counts how often it was read. */
export function countingClock(iso = "2025-01-02T03:04:05.000Z"): Clock & { readonly calls: number } {
  let calls = 0;
  return {
    now: () => {
      calls += 1;
      return new Date(iso);
    },
    get calls() {
      return calls;
    },
  };
}
