import { join } from "node:path";
import { FileSegmentStore, MemorySegmentStore } from "@insomnia/segment-store";
import type { SegmentStartRecord } from "@insomnia/segment-store";
import { Worker } from "@insomnia/worker";
import type { Tool } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, expect, test } from "vitest";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { Pod } from "./pod.ts";
import { MCP_BOUNDARIES_NOTE } from "./working-boundaries.ts";

const INSTRUCTION = 'Tools: {{join tools ", "}}\n';
const NOW = "2025-01-02T03:04:05.000Z";
const dirs: PodDir[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.cleanup();
});

async function podDir(): Promise<PodDir> {
  const dir = await makePodDir(INSTRUCTION, {});
  dirs.push(dir);
  return dir;
}

const worker = () => new Worker({ client: new ScriptedLlmClient([{ content: "ok" }, { content: "ok" }]) });

/** A tool as an MCP server's would be named, with a schema only its server knows. */
function serverTool(name: string, description: string): Tool {
  return {
    name,
    description,
    inputSchema: { type: "object", properties: { q: { type: "string" } } },
    execute: () => "",
  };
}

test("the_segment_start_records_the_definitions_as_sent_and_restore_hands_them_to_factories", async () => {
  const dir = await podDir();
  const storeDir = join(dir.root, "segments");
  const first = worker();
  first.tools.register(echoTool("read_file"));
  first.tools.registerFactory(() => [serverTool("mcp__fx__b", "B"), serverTool("mcp__fx__a", "A")]);
  const pod = await Pod.fromManifest(dir.manifest, {
    worker: first,
    store: new FileSegmentStore(storeDir),
    clock: countingClock(NOW),
    env: dir.env,
  });
  await pod.run("one");
  await pod.close();
  const { records } = await new FileSegmentStore(storeDir).readSegment(pod.segmentId!);
  const start = records[0] as SegmentStartRecord;
  expect(start.toolDefinitions?.map((tool) => tool.name)).toEqual(["mcp__fx__a", "mcp__fx__b", "read_file"]);
  expect(JSON.stringify(start.toolDefinitions)).toBe(JSON.stringify(first.tools.definitions()));
  expect(start.systemPrompt).toContain(MCP_BOUNDARIES_NOTE);

  // On restore the factory sees the recorded definitions before it runs, and offers them again.
  const again = worker();
  let seen: SegmentStartRecord["toolDefinitions"];
  again.tools.register(echoTool("read_file"));
  again.tools.registerFactory(() =>
    (seen ?? []).filter((d) => d.name.startsWith("mcp__")).map((d) => ({ ...d, execute: () => "" })),
  );
  const restored = await Pod.restore(new FileSegmentStore(storeDir), pod.segmentId!, again, {
    onSegmentStart: (recorded) => {
      seen = recorded.toolDefinitions;
    },
  });
  expect(JSON.stringify(again.tools.definitions())).toBe(JSON.stringify(start.toolDefinitions));
  await restored.close();
});

test("a_segment_written_before_tool_definitions_were_recorded_still_restores", async () => {
  const store = new MemorySegmentStore();
  const writer = await store.createSegment({
    type: "segment_start",
    systemPrompt: "old prompt",
    sources: [],
    createdAt: NOW,
    tools: [],
  });
  await writer.append({ type: "message", message: { role: "user", content: "hi" } });
  await writer.close();
  let seen: SegmentStartRecord | undefined;
  const pod = await Pod.restore(store, writer.segmentId, worker(), { onSegmentStart: (start) => (seen = start) });
  expect(seen?.toolDefinitions).toBeUndefined();
  expect(pod.systemPrompt).toBe("old prompt");
  await pod.close();
});

test("a_prompt_without_mcp_tools_has_no_mcp_note", async () => {
  const dir = await podDir();
  const w = worker();
  w.tools.register(echoTool("read_file"));
  const pod = await Pod.fromManifest(dir.manifest, { worker: w, store: new MemorySegmentStore(), env: dir.env });
  await pod.materialize();
  expect(pod.systemPrompt).not.toContain("MCP");
  await pod.close();
});
