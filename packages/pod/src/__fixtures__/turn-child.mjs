// A pod process that crashes mid-turn: restores a segment, starts a turn with a turn id whose
// model call never answers, prints "logged" once the user message is in the log, and waits
// to be killed. argv: <pod module path> <store dir> <segment id> <turn id>
import { pathToFileURL } from "node:url";
import { Worker } from "@insomnia/worker";

const [modulePath, storeDir, segmentId, turnId] = process.argv.slice(2);
const { FileSegmentStore, Pod } = await import(pathToFileURL(modulePath).href);

const worker = new Worker({ client: { complete: () => new Promise(() => undefined) } });
const pod = await Pod.restore(new FileSegmentStore(storeDir), segmentId, worker);
worker.addMessageListener((message) => {
  // Printed after the pod's own listener appended the message to the log.
  if (message.role === "user") queueMicrotask(() => process.stdout.write("logged\n"));
});
await pod.run("the question", { turnId });
