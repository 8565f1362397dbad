// A long-lived process of the pod-writer race tests: answers one command per IPC message.
// argv: <file: URL of this package built to JavaScript> <name of this child>.
// "restore": a new FileSegmentStore opens the pod's latest segment and appends one record.
// "start": a new FileSegmentStore takes the pod's writer lock, then continues the latest
// segment or creates the first one, and appends one record (what `pod run` does).
// While it holds the pod, the child keeps the file `<holding>` created exclusively: a second
// holder at the same moment finds it there and reports `double: true`.
import { open, unlink } from "node:fs/promises";

const [bundle, name] = process.argv.slice(2);
const { FileSegmentStore } = await import(bundle);

const start = { type: "segment_start", systemPrompt: "race\n", sources: [], createdAt: "2026-01-01T00:00:00Z" };

async function holding(file, body) {
  let marker;
  let double = false;
  try {
    marker = await open(file, "wx");
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
    double = true;
  }
  try {
    return { double, ...(await body()) };
  } finally {
    if (marker !== undefined) {
      await marker.close();
      await unlink(file);
    }
  }
}

async function run(command) {
  const store = new FileSegmentStore(command.dir);
  const record = { type: "message", message: { round: command.round, child: name } };
  try {
    if (command.op === "restore") {
      const opened = await store.openSegment(await store.latestSegment());
      let result;
      try {
        result = await holding(command.holding, async () => {
          await opened.writer.append(record);
          return { held: true, record, warnings: opened.warnings.map((w) => w.code) };
        });
      } finally {
        await opened.writer.close();
      }
      return result;
    }
    const lock = await store.lockPod();
    try {
      return await holding(command.holding, async () => {
        const latest = await store.latestSegment();
        const writer =
          latest === undefined ? await store.createSegment(start) : (await store.openSegment(latest)).writer;
        try {
          await writer.append(record);
        } finally {
          await writer.close();
        }
        return { held: true, record, created: latest === undefined, warnings: lock.warnings.map((w) => w.code) };
      });
    } finally {
      await lock.release();
    }
  } catch (error) {
    return { held: false, code: error.code, message: String(error.message) };
  }
}

process.on("message", (command) => {
  if (command.op === "exit") process.exit(0);
  run(command).then(
    (reply) => process.send({ id: command.id, ...reply }),
    (error) => process.send({ id: command.id, held: false, code: "CRASH", message: String(error.stack) }),
  );
});
process.send({ ready: true });
