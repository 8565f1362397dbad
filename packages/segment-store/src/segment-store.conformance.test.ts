import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILT_PACKAGE_URL } from "./__fixtures__/built-package.ts";
import { encodeSegmentLine } from "./segment-codec.ts";
import { FileSegmentStore } from "./segment-file-store.ts";
import { MemorySegmentStore } from "./segment-memory-store.ts";
import { describeSegmentStoreConformance } from "./testing/index.ts";

/** Byte offsets just after each newline of a segment file. */
function lineEnds(data: Buffer): number[] {
  const ends: number[] = [];
  for (let i = data.indexOf(0x0a); i !== -1; i = data.indexOf(0x0a, i + 1)) ends.push(i + 1);
  return ends;
}

describeSegmentStoreConformance("FileSegmentStore conformance", async () => {
  const root = await mkdtemp(join(tmpdir(), "insomnia-segment-store-"));
  const dir = join(root, "segments");
  const store = new FileSegmentStore(dir);
  return {
    store,
    reopen: async () => new FileSegmentStore(dir),
    cleanup: () => rm(root, { recursive: true, force: true }),
    damage: {
      async corruptTail(segmentId) {
        // The first bytes of the next line: what an append killed mid-write leaves.
        const file = store.segmentFile(segmentId);
        const data = await readFile(file);
        const next = encodeSegmentLine(lineEnds(data).length, JSON.stringify({ type: "message", message: "torn" }));
        await writeFile(file, Buffer.concat([data, next.subarray(0, 30)]));
      },
      async corruptMiddle(segmentId, seq) {
        // The newline that ends record `seq`: the record and the next one read as one damaged line.
        const file = store.segmentFile(segmentId);
        const data = await readFile(file);
        const at = (lineEnds(data)[seq] ?? 0) - 1;
        data[at] = 0x0b;
        await writeFile(file, data);
      },
      async crashedLock() {
        // What a copy without hard links leaves when killed between creating and writing the lock.
        await writeFile(store.podLockFile, "");
      },
      snapshot: (segmentId) => readFile(store.segmentFile(segmentId)),
    },
    workerThread: {
      module: join(import.meta.dirname, "__fixtures__", "file-store-thread.mjs"),
      args: { bundle: BUILT_PACKAGE_URL, dir },
    },
  };
});

describeSegmentStoreConformance(
  "MemorySegmentStore conformance",
  async () => ({ store: new MemorySegmentStore(), cleanup: async () => {} }),
  {
    skip: {
      reopen: "a MemorySegmentStore has no backing data beyond its instance",
      corruptTail: "a MemorySegmentStore has no partial appends",
      corruptMiddle: "a MemorySegmentStore keeps no bytes that could be damaged",
      crashedLock: "a MemorySegmentStore's lock dies with its instance",
      snapshot: "a MemorySegmentStore has no backing data to compare",
      workerThread: "a MemorySegmentStore cannot be shared between threads",
    },
  },
);
