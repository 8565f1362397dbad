// A pod process handling the first message of a pod, as a service does: `open` uses
// Pod.open (the decision under the pod's writer lock); `unlocked` reads latestSegment() and
// then calls fromManifest/restore, as a caller without the lock would. Prints one JSON line:
// { ok: true, segmentId } or { locked: true }. argv: <pod module path> <store dir> <manifest JSON> <message> <mode>
import { pathToFileURL } from "node:url";
import { Worker } from "@insomnia/worker";

const [modulePath, storeDir, manifestJson, message, mode] = process.argv.slice(2);
const { FileSegmentStore, Pod, SegmentStoreError } = await import(pathToFileURL(modulePath).href);

const manifest = JSON.parse(manifestJson);
// The model answers on the next turn of the event loop, so the two processes' turns overlap.
const worker = new Worker({
  client: {
    complete: () => new Promise((resolve) => setImmediate(() => resolve({ content: `answer to ${message}` }))),
  },
});
const store = new FileSegmentStore(storeDir);
try {
  let pod;
  if (mode === "open") {
    pod = await Pod.open(manifest, { worker, store, env: {} });
  } else {
    const latest = await store.latestSegment();
    pod =
      latest === undefined
        ? await Pod.fromManifest(manifest, { worker, store, env: {} })
        : await Pod.restore(store, latest, worker);
  }
  try {
    await pod.run(message);
    process.stdout.write(`${JSON.stringify({ ok: true, segmentId: pod.segmentId })}\n`);
  } finally {
    await pod.close();
  }
} catch (error) {
  if (!(SegmentStoreError.is(error) && error.code === "SEGMENT_LOCKED")) throw error;
  process.stdout.write(`${JSON.stringify({ locked: true })}\n`);
}
