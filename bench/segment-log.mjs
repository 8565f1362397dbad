// Benchmark 6: the segment log — appends per second with fsync against raw
// write + fsync of the same bytes, and restoring a 100,000-record segment against a raw
// read + split + JSON.parse of the same file.
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { open, readFile, appendFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { compare, fmtBytes, fmtMs, fmtRatio, importDist, main, median, met, result, tempDir } from "./lib.mjs";
import { message } from "./segment-records.mjs";

const { Pod } = await importDist("pod");
const { FileSegmentStore } = await importDist("segment-store");
const { Worker } = await importDist("worker");

const RECORDS = 100_000;
/** Rounds of the restore timings (one sample of each task per round). */
const ROUNDS = 10;

const START = {
  type: "segment_start",
  systemPrompt:
    "You are a software engineer.\n\n---\n## Working boundaries\n\nReadable:\n  - /repo\nWritable:\n  - /repo\n",
  sources: [],
  createdAt: "2026-11-30T16:37:00Z",
};

/** One line in the segment format (see packages/segment-store/src/segment-codec.ts): used only to build the big file fast. */
function encodeLine(seq, record) {
  const json = JSON.stringify(record);
  let crc = crc32(`{"seq":${seq},"record":`);
  crc = crc32(Buffer.from(json), crc);
  crc = crc32("}", crc);
  return `{"seq":${seq},"crc":"${crc.toString(16).padStart(8, "0")}","record":${json}}\n`;
}

async function appendRates(dir, log) {
  const store = new FileSegmentStore(join(dir, "appends"));
  const writer = await store.createSegment(START);
  const file = store.segmentFile(writer.segmentId);
  // The floor writes the very bytes our writer wrote, so first let ours write a batch.
  const BATCH = 50;
  let seq = 0;
  const oursBatch = async () => {
    const t0 = performance.now();
    for (let i = 0; i < BATCH; i++) await writer.append({ type: "message", message: message(seq++) });
    return performance.now() - t0;
  };
  await oursBatch();
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .slice(1, 1 + BATCH)
    .map((l) => Buffer.from(`${l}\n`));
  const floorFile = join(dir, "floor.jsonl");
  const fd = openSync(floorFile, "a");
  const floorBatch = () => {
    const t0 = performance.now();
    for (const line of lines) {
      writeSync(fd, line);
      fsyncSync(fd);
    }
    return performance.now() - t0;
  };
  const asyncFile = join(dir, "floor-async.jsonl");
  const handle = await open(asyncFile, "a");
  const asyncBatch = async () => {
    const t0 = performance.now();
    for (const line of lines) {
      await handle.write(line);
      await handle.sync();
    }
    return performance.now() - t0;
  };
  floorBatch();
  await asyncBatch();
  // Alternate batches for a fixed time, so both see the same disk conditions.
  const ours = [];
  const floor = [];
  const floorAsync = [];
  const until = performance.now() + 6_000;
  while (performance.now() < until || ours.length < 5) {
    ours.push(await oursBatch());
    floor.push(floorBatch());
    floorAsync.push(await asyncBatch());
  }
  await writer.close();
  closeSync(fd);
  await handle.close();
  const lineBytes = lines.reduce((n, l) => n + l.length, 0) / lines.length;
  log(`appends: ${ours.length} batches of ${BATCH}`);
  return {
    ours: (BATCH * 1000) / median(ours),
    floor: (BATCH * 1000) / median(floor),
    floorAsync: (BATCH * 1000) / median(floorAsync),
    batches: ours.length,
    batch: BATCH,
    lineBytes,
  };
}

async function restoreTimes(dir, log) {
  const store = new FileSegmentStore(join(dir, "restore"));
  const writer = await store.createSegment(START);
  const id = writer.segmentId;
  await writer.close();
  const file = store.segmentFile(id);
  // 100,000 records written in one go in the store's line format (fsyncing each would take minutes).
  const chunks = [];
  for (let seq = 1; seq <= RECORDS; seq++) chunks.push(encodeLine(seq, { type: "message", message: message(seq) }));
  await appendFile(file, chunks.join(""));
  const bytes = readFileSync(file).length;
  const check = await store.readSegment(id);
  if (check.records.length !== RECORDS + 1 || check.warnings.length !== 0) {
    throw new Error(
      `the generated segment does not read back: ${check.records.length} records, ${check.warnings.length} warnings`,
    );
  }
  log(`restore: segment of ${RECORDS + 1} records, ${bytes} bytes`);
  const worker = () => new Worker({ client: { complete: async () => ({ content: "" }) } });
  const timing = await compare(
    {
      readSegment: async () => (await store.readSegment(id)).records.length,
      openSegment: async () => {
        const opened = await store.openSegment(id);
        await opened.writer.close();
        return opened.records.length;
      },
      podRestore: async () => {
        const pod = await Pod.restore(store, id, worker());
        await pod.close();
      },
      floorSync: () => {
        const lines = readFileSync(file, "utf8").split("\n");
        const records = [];
        for (const line of lines) if (line !== "") records.push(JSON.parse(line).record);
        return records.length;
      },
      floorAsync: async () => {
        const lines = (await readFile(file, "utf8")).split("\n");
        const records = [];
        for (const line of lines) if (line !== "") records.push(JSON.parse(line).record);
        return records.length;
      },
    },
    // One call of each per round, in an order rotated every round: ours and the references
    // alternate call by call, so a change of the machine's load hits them alike.
    { time: 0, rounds: ROUNDS, iterations: 1, warmupTime: 0, warmupIterations: 0 },
  );
  return { ...timing, bytes };
}

export default async function run(log) {
  const { dir, cleanup } = await tempDir("segments");
  try {
    const appends = await appendRates(dir, log);
    const restore = await restoreTimes(dir, log);
    const appendRatio = appends.floor / appends.ours;
    const r = (a, b) => a.ms / b.ms;
    return result(6, "Segment log", {
      rows: [
        {
          figure: "appends/s with fsync (`FileSegmentWriter.append`, awaited one by one)",
          ours: `${Math.round(appends.ours)}/s`,
          reference: `\`writeSync\` + \`fsyncSync\` of the same line bytes: ${Math.round(appends.floor)}/s`,
          ratio: `${fmtRatio(appendRatio)} slower`,
          goal: "—",
          met: "—",
        },
        {
          figure: "appends/s, async reference",
          ours: `${Math.round(appends.ours)}/s`,
          reference: `\`FileHandle.write\` + \`FileHandle.sync\`: ${Math.round(appends.floorAsync)}/s`,
          ratio: `${fmtRatio(appends.floorAsync / appends.ours)} slower`,
          goal: "—",
          met: "—",
        },
        {
          figure: `restore: \`readSegment\` of ${RECORDS.toLocaleString("en")} records (${fmtBytes(restore.bytes)})`,
          ours: fmtMs(restore.readSegment.ms),
          reference: `\`readFileSync\` + \`split\` + \`JSON.parse\` per line: ${fmtMs(restore.floorSync.ms)}`,
          ratio: fmtRatio(r(restore.readSegment, restore.floorSync)),
          goal: "≤ 1.2x",
          met: met(r(restore.readSegment, restore.floorSync) <= 1.2),
        },
        {
          figure: "restore: `openSegment` (lock, scan, writer) + `close`",
          ours: fmtMs(restore.openSegment.ms),
          reference: `\`readFileSync\` + \`split\` + \`JSON.parse\`: ${fmtMs(restore.floorSync.ms)}`,
          ratio: fmtRatio(r(restore.openSegment, restore.floorSync)),
          goal: "—",
          met: "—",
        },
        {
          figure: "restore: `Pod.restore` (openSegment + history into a Worker + source check) + `close`",
          ours: fmtMs(restore.podRestore.ms),
          reference: `\`readFileSync\` + \`split\` + \`JSON.parse\`: ${fmtMs(restore.floorSync.ms)}`,
          ratio: fmtRatio(r(restore.podRestore, restore.floorSync)),
          goal: "—",
          met: "—",
        },
        {
          figure: "restore reference, async read",
          ours: fmtMs(restore.readSegment.ms),
          reference: `\`fs.promises.readFile\` + \`split\` + \`JSON.parse\`: ${fmtMs(restore.floorAsync.ms)}`,
          ratio: fmtRatio(r(restore.readSegment, restore.floorAsync)),
          goal: "—",
          met: "—",
        },
      ],
      notes: [
        `Appends: one segment in a temp dir on the machine's disk; message records of ${Math.round(appends.lineBytes)} bytes per line on average (user, assistant with a tool call, tool result, assistant). Ours and the two references run in alternating batches of ${appends.batch} for ~6 s (${appends.batches} batches each); medians of the batch rates. Every append of ours is a positional write of the framed line (seq, CRC-32, record) and an fsync, acknowledged only after the fsync.`,
        `Restore: a segment of ${(RECORDS + 1).toLocaleString("en")} records (start + ${RECORDS.toLocaleString("en")} messages, same mix) built in the store's line format and checked to read back without warnings. Ours verifies framing, sequence and the CRC-32 of every line, and the record shape; the reference only parses JSON. Goal (issue 15): \`readSegment\` ≤ 1.2x the reference, with every check kept.`,
        `Restore timings: ${ROUNDS} rounds, each calling every task once in an order rotated every round (after one warm-up call each), so ours and the references alternate call by call; medians of the ${ROUNDS} samples.`,
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);
