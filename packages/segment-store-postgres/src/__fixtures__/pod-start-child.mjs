// A long-lived process of the pod-writer races: one round per IPC message.
// argv: <built store module> <connection string>. Each round opens a new store of the round's
// pod over this process's pool. "start" does what `pod run` does: take the pod's writer lock,
// then continue the latest segment or create the first one, append one record, close, release.
// "restore" opens the pod's latest segment (after a crash) and appends one record; while it
// holds the pod it keeps the file `holding` created exclusively, so a second holder at the same
// moment finds it there and reports `double: true`.
import { open, unlink } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import pg from "pg";

const [modulePath, connectionString] = process.argv.slice(2);
const { PostgresSegmentStore } = await import(pathToFileURL(modulePath).href);
const pool = new pg.Pool({ connectionString, max: 4 });

const start = { type: "segment_start", systemPrompt: "race\n", sources: [], createdAt: "2026-01-01T00:00:00Z" };

async function restore({ podId, name, round, holding }) {
  const store = await PostgresSegmentStore.open({ pool, podId });
  try {
    const opened = await store.openSegment(await store.latestSegment());
    let marker;
    let double = false;
    try {
      marker = await open(holding, "wx");
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      double = true;
    }
    const record = { type: "message", message: { round, child: name } };
    try {
      await opened.writer.append(record);
    } finally {
      if (marker !== undefined) {
        await marker.close();
        await unlink(holding);
      }
      await opened.writer.close();
    }
    return { held: true, double, record, warnings: opened.warnings.map((w) => w.code) };
  } catch (error) {
    return { held: false, code: error.code, message: String(error.message) };
  } finally {
    await store.close();
  }
}

async function round(command) {
  if (command.op === "restore") return restore(command);
  const { podId, name } = command;
  const store = await PostgresSegmentStore.open({ pool, podId });
  try {
    const lock = await store.lockPod();
    try {
      const latest = await store.latestSegment();
      const writer = latest === undefined ? await store.createSegment(start) : (await store.openSegment(latest)).writer;
      try {
        await writer.append({ type: "message", message: { child: name } });
      } finally {
        await writer.close();
      }
      return { held: true, created: latest === undefined };
    } finally {
      await lock.release();
    }
  } catch (error) {
    return { held: false, code: error.code, message: String(error.message) };
  } finally {
    await store.close();
  }
}

process.on("message", (command) => {
  if (command.op === "exit") {
    pool.end().then(() => process.exit(0));
    return;
  }
  round(command).then(
    (reply) => process.send({ id: command.id, ...reply }),
    (error) => process.send({ id: command.id, held: false, code: "CRASH", message: String(error.stack) }),
  );
});
process.send({ ready: true });
