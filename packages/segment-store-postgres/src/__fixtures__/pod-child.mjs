// One life of a pod whose log is in PostgreSQL, in its own process.
// argv: <built store module> <JSON { connectionString, podId, pwd, life: "first" | "second" }>
// "first": Pod.fromManifest, turns, a compaction, more turns, close.
// "second": Pod.restore of the pod's latest segment, more turns, close.
// Prints JSON: every system prompt the model saw, the stored segment starts, warnings, segment id.
import { pathToFileURL } from "node:url";
import { Pod, collectWarnings } from "@insomnia/pod";
import { Worker } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";

const [modulePath, optionsJson] = process.argv.slice(2);
const { PostgresSegmentStore } = await import(pathToFileURL(modulePath).href);
const { connectionString, podId, pwd, env, life } = JSON.parse(optionsJson);

const client = new ScriptedLlmClient((_request, index) =>
  index % 3 === 0
    ? { content: `${life} ${index}`, toolCalls: [{ id: `${life}-${index}`, name: "read_file", input: { index } }] }
    : { content: `${life} answer ${index}` },
);
const worker = new Worker({ client });
worker.tools.register(echoTool("read_file"));
const store = await PostgresSegmentStore.open({ connectionString, podId });
const notifier = collectWarnings();
const clock = { now: () => new Date("2025-01-02T03:04:05.000Z") };
let pod;
if (life === "first") {
  const manifest = {
    pod: { name: "pg-pod", pwd },
    worker: { instruction: "$workspace/main", max_tokens: 1024, max_turns: 8, temperature: 0 },
    scope: { allow: [{ target: ".", permission: "write" }], deny: [] },
  };
  pod = await Pod.fromManifest(manifest, { worker, store, clock, env, notifier });
  for (let turn = 0; turn < 3; turn++) await pod.run(`turn ${turn}`);
  await pod.compact((history) => `summary of ${history.length} messages`);
  await pod.run("turn 3");
} else {
  pod = await Pod.restore(store, await store.latestSegment(), worker, { notifier, clock });
  for (let turn = 0; turn < 2; turn++) await pod.run(`second life turn ${turn}`);
}
const segmentId = pod.segmentId;
await pod.close();
const starts = [];
const counts = [];
for (const id of await store.listSegments()) {
  const { records } = await store.readSegment(id);
  starts.push(records[0].systemPrompt);
  counts.push(records.length);
}
await store.close();
process.stdout.write(
  JSON.stringify({
    prompts: client.requests.map((r) => r.systemPrompt),
    warnings: notifier.warnings.map((w) => w.code),
    starts,
    counts,
    segmentId,
  }),
);
