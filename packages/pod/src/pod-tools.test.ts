import { Worker } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import { MemorySegmentStore } from "@insomnia/segment-store";
import { afterEach, describe, expect, test } from "vitest";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { previewSystemPrompt } from "./pod-prompt.ts";
import { Pod } from "./pod.ts";
import { PodError } from "./pod-error.ts";
import type { PodToolContext, PodToolFactory } from "./pod-tools.ts";

const INSTRUCTION = 'Tools: {{join tools ", "}}\n';
const NOW = "2025-01-02T03:04:05.000Z";

const dirs: PodDir[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.cleanup();
});

/** Factories that record what they were given. */
function recording(): { factories: PodToolFactory[]; seen: PodToolContext[] } {
  const seen: PodToolContext[] = [];
  const factories: PodToolFactory[] = [
    (context) => {
      seen.push(context);
      return [echoTool("read_file"), echoTool("list_dir")];
    },
    async (context) => {
      seen.push(context);
      return [echoTool("remote_search")];
    },
  ];
  return { factories, seen };
}

const worker = () => new Worker({ client: new ScriptedLlmClient(() => ({ content: "ok" })) });

describe("tool factories", () => {
  test("the_pod_makes_its_tools_on_its_own_scope_and_renders_their_names", async () => {
    const dir = await makePodDir(INSTRUCTION);
    dirs.push(dir);
    const { factories, seen } = recording();
    const signal = new AbortController().signal;
    const w = worker();
    const pod = await Pod.fromManifest(dir.manifest, {
      worker: w,
      store: new MemorySegmentStore(),
      clock: countingClock(NOW),
      env: dir.env,
      tools: factories,
      signal,
    });
    expect(w.tools.names()).toEqual(["list_dir", "read_file", "remote_search"]);
    expect(seen.map((context) => [context.pwd, context.scope.base, context.signal])).toEqual([
      [dir.pwd, dir.manifest.pod.pwd, signal],
      [dir.pwd, dir.manifest.pod.pwd, signal],
    ]);
    expect(seen[0]!.scope).toBe(seen[1]!.scope);
    await pod.run("hi");
    expect(pod.systemPrompt).toContain("Tools: list_dir, read_file, remote_search\n");

    // `pod prompt`'s path renders the same list from the same factories.
    const printed = await previewSystemPrompt({
      manifest: dir.manifest,
      toolFactories: recording().factories,
      now: new Date(NOW),
      env: dir.env,
    });
    expect(printed.prompt).toBe(pod.systemPrompt);
    expect(printed.tools).toEqual(["list_dir", "read_file", "remote_search"]);
    await pod.close();
  });

  test("restore_makes_the_tools_from_the_manifest_before_it_compares_the_recorded_list", async () => {
    const dir = await makePodDir(INSTRUCTION);
    dirs.push(dir);
    const store = new MemorySegmentStore();
    const first = await Pod.fromManifest(dir.manifest, {
      worker: worker(),
      store,
      env: dir.env,
      tools: recording().factories,
    });
    await first.run("hi");
    const segment = first.segmentId!;
    await first.close();

    const { factories, seen } = recording();
    const warnings: string[] = [];
    const w = worker();
    const restored = await Pod.restore(store, segment, w, {
      manifest: dir.manifest,
      tools: factories,
      notifier: { warn: (warning) => warnings.push(warning.code) },
    });
    expect([w.tools.names(), warnings, seen.length]).toEqual([["list_dir", "read_file", "remote_search"], [], 2]);
    await restored.close();

    const error = await Pod.restore(store, segment, worker(), { tools: factories }).catch((caught: unknown) => caught);
    expect(PodError.is(error) && error.code).toBe("INVALID_ARGUMENT");
  });
});
