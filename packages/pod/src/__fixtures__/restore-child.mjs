// Second life of a pod, in its own process: restore a segment from the file store, run
// turns and a compaction, print every system prompt the client saw as JSON on stdout.
// argv: <pod module path> <store dir> <segment id>
import { pathToFileURL } from "node:url";
import { Worker } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";

const [modulePath, storeDir, segmentId] = process.argv.slice(2);
const { FileSegmentStore, Pod, collectWarnings } = await import(pathToFileURL(modulePath).href);

const client = new ScriptedLlmClient((_request, index) =>
  index % 2 === 0
    ? { content: `child ${index}`, toolCalls: [{ id: `child-${index}`, name: "read_file", input: { index } }] }
    : { content: `child answer ${index}` },
);
const worker = new Worker({ client });
worker.tools.register(echoTool("read_file"));
worker.tools.register(echoTool("a_tool_only_the_child_has"));
const store = new FileSegmentStore(storeDir);
const notifier = collectWarnings();
const pod = await Pod.restore(store, segmentId, worker, { notifier });
for (let turn = 0; turn < 3; turn++) await pod.run(`child turn ${turn}`);
await pod.compact((history) => `child summary of ${history.length} messages`);
for (let turn = 3; turn < 5; turn++) await pod.run(`child turn ${turn}`);
await pod.close();

const starts = [];
for (const id of await store.listSegments()) {
  const { records } = await store.readSegment(id);
  starts.push(records[0].systemPrompt);
}
process.stdout.write(
  JSON.stringify({
    prompts: client.requests.map((r) => r.systemPrompt),
    warnings: notifier.warnings.map((w) => w.code),
    starts,
    segmentId: pod.segmentId,
  }),
);
