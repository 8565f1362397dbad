import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { Worker } from "@insomnia/worker";
import type { LlmResponse } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterAll, beforeAll, expect, test } from "vitest";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { BUILT_PACKAGE } from "./__fixtures__/built-package.ts";
import { Pod } from "./pod.ts";
import { FileSegmentStore } from "@insomnia/segment-store";

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, "..");
let dir: PodDir;

beforeAll(async () => {
  dir = await makePodDir(
    'You are a pod in {{cwd}}.\nRendered at {{datetime}} with tools {{join tools ", "}}.\n{{> part}}\n',
    { agentsMd: "Original project rules.\n" },
  );
  await dir.writePrompt("part", 'Readable roots: {{join scope.readable ", "}}.');
});

afterAll(async () => {
  await dir.cleanup();
});

test("system_prompt_is_byte_identical_across_turns_compactions_and_a_restore_in_a_new_process", async () => {
  const script = (_request: unknown, index: number): LlmResponse =>
    index % 3 === 0
      ? { content: `calling ${index}`, toolCalls: [{ id: `call-${index}`, name: "read_file", input: { index } }] }
      : { content: `answer ${index}` };
  const client = new ScriptedLlmClient(script);
  const worker = new Worker({ client });
  worker.tools.register(echoTool("read_file"));
  worker.tools.registerFactory(() => echoTool("write_file"));
  const storeDir = join(dir.root, "segments");
  const store = new FileSegmentStore(storeDir);
  const pod = await Pod.fromManifest(dir.manifest, { worker, store, clock: countingClock(), env: dir.env });

  for (let turn = 0; turn < 4; turn++) await pod.run(`turn ${turn}`);
  await pod.compact((history) => `summary of ${history.length} messages`);
  for (let turn = 4; turn < 7; turn++) await pod.run(`turn ${turn}`);
  await pod.compact((history) => `summary of ${history.length} messages`);
  await pod.run("turn 7");
  await pod.close();

  const prompt = worker.getSystemPrompt()!;
  const { records } = await store.readSegment((await store.listSegments())[0]!);
  expect(records[0]?.type === "segment_start" && records[0].systemPrompt).toBe(prompt);
  expect(prompt).toContain("Original project rules.");
  expect(prompt).toContain("2025-01-02T03:04:05Z");

  // Everything a re-render would pick up changes before the second life.
  await writeFile(join(dir.pwd, "AGENTS.md"), "Changed project rules.\n");
  await dir.writePrompt("part", "A changed include.");

  const child = await run(
    process.execPath,
    [join(packageDir, "src", "__fixtures__", "restore-child.mjs"), BUILT_PACKAGE, storeDir, pod.segmentId!],
    { cwd: packageDir },
  );
  const second = JSON.parse(child.stdout) as {
    prompts: string[];
    warnings: string[];
    starts: string[];
    segmentId: string;
  };

  expect(client.requests.length).toBeGreaterThanOrEqual(10);
  expect(second.prompts.length).toBeGreaterThanOrEqual(7);
  expect(second.starts).toHaveLength(4);
  expect(second.segmentId).not.toBe(pod.segmentId);
  // The child offers other tools than the prompt was rendered with: the prompt stays as it is, and the pod says so.
  expect(second.warnings).toEqual(["SOURCES_CHANGED", "TOOLS_CHANGED"]);
  for (const seen of [...client.requests.map((r) => r.systemPrompt), ...second.prompts, ...second.starts]) {
    expect(seen).toBe(prompt);
  }
  expect(second.prompts.some((p) => p.includes("a_tool_only_the_child_has"))).toBe(false);
});
