// A writer in its own process (another "machine"), driven by the fault tests.
// argv: <built store module> <JSON options>; options:
//   { connectionString, podId, leaseMs?, schema?, mode: "append" | "commands" | "migrate", segmentId?, count? }
// "append": creates a segment (or opens segmentId), prints `ready <id>`, then appends records
//   0, 1, … (or up to count), printing `ack <n>` once each is acknowledged; exits when done.
// "commands": reads lines from stdin: `open <id>`, `create`, `append <n>`, `exit`; answers each
//   with `ok …` or `error <code> <durable>`.
// "migrate": opens the store (applying migrations) and prints `ok`.
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

const [modulePath, optionsJson] = process.argv.slice(2);
const { PostgresSegmentStore } = await import(pathToFileURL(modulePath).href);
const options = JSON.parse(optionsJson);

/** The n-th record of the fault tests (the same in fault.test.ts). */
function record(n) {
  return { type: "message", message: { n, text: `record ${n}: ✓ "quoted" \\ back` } };
}

const start = {
  type: "segment_start",
  systemPrompt: "You are a pod under test.\n",
  sources: [],
  createdAt: "2026-01-01T00:00:00Z",
};

const say = (line) => process.stdout.write(`${line}\n`);

const store = await PostgresSegmentStore.open({
  connectionString: options.connectionString,
  podId: options.podId,
  ...(options.schema === undefined ? {} : { schema: options.schema }),
  ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
});

if (options.mode === "migrate") {
  say("ok");
  await store.close();
} else if (options.mode === "append") {
  const writer =
    options.segmentId === undefined
      ? await store.createSegment(start)
      : (await store.openSegment(options.segmentId)).writer;
  say(`ready ${writer.segmentId}`);
  const count = options.count ?? Number.POSITIVE_INFINITY;
  for (let n = options.from ?? 0; n < count; n += 1) {
    await writer.append(record(n));
    say(`ack ${n}`);
  }
  await writer.close();
  await store.close();
} else {
  let writer;
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [command, arg] = line.split(" ");
    try {
      if (command === "exit") break;
      if (command === "create") {
        writer = await store.createSegment(start);
        say(`ok ${writer.segmentId}`);
      } else if (command === "open") {
        const opened = await store.openSegment(arg);
        writer = opened.writer;
        say(`ok ${opened.records.length} ${opened.warnings.map((w) => w.code).join(",") || "-"}`);
      } else if (command === "append") {
        await writer.append(record(Number(arg)));
        say(`ok ${arg}`);
      }
    } catch (error) {
      say(`error ${error?.code ?? "?"} ${error?.durable ?? "-"} ${String(error?.message).replaceAll("\n", " ")}`);
    }
  }
  await store.close();
}
