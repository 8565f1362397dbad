import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { FileSegmentStore, MemorySegmentStore } from "@insomnia/segment-store";
import { Worker } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { propertyRuns } from "../../../test/support/property-runs.ts";
import { makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { BUILT_PACKAGE } from "./__fixtures__/built-package.ts";
import { Pod } from "./pod.ts";

// Issue 27: "at most one process writes a pod, across all its segments". A library user that
// decides between restoring and starting a pod outside its writer lock forks a new pod when
// two processes handle its first message; Pod.open decides under the lock.

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, "..");
let dir: PodDir;

beforeAll(async () => {
  dir = await makePodDir("You are a pod.\n");
});

afterAll(async () => {
  await dir.cleanup();
});

type ChildResult = { ok: true; segmentId: string } | { locked: true };

async function child(storeDir: string, message: string): Promise<ChildResult> {
  const { stdout } = await run(
    process.execPath,
    [
      join(packageDir, "src", "__fixtures__", "open-child.mjs"),
      BUILT_PACKAGE,
      storeDir,
      JSON.stringify(dir.manifest),
      message,
      "open",
    ],
    { cwd: packageDir },
  );
  return JSON.parse(stdout) as ChildResult;
}

describe("Pod.open", () => {
  test("two_processes_opening_one_new_pod_at_once_make_one_conversation_every_time", async () => {
    // Each round is two new processes; a decision outside the lock forked the pod by the second round in every try.
    const ROUNDS = propertyRuns(5, 100);
    for (let round = 0; round < ROUNDS; round++) {
      const storeDir = join(dir.root, `race-${round}`);
      const results = await Promise.all([child(storeDir, "first"), child(storeDir, "second")]);
      const store = new FileSegmentStore(storeDir);
      const segments = await store.listSegments();
      // One conversation: one segment, holding the message of every process that said it answered.
      expect(segments, `round ${round}: ${JSON.stringify(results)}`).toHaveLength(1);
      const { records } = await store.readSegment(segments[0]!);
      const said = records.flatMap((r) =>
        r.type === "message" && (r.message as { role: string }).role === "user"
          ? [(r.message as { content: string }).content]
          : [],
      );
      const answered = results.flatMap((r, i) => ("ok" in r ? [i === 0 ? "first" : "second"] : []));
      expect(answered.length).toBeGreaterThan(0);
      expect([...said].sort()).toEqual([...answered].sort());
      for (const result of results) if ("ok" in result) expect(result.segmentId).toBe(segments[0]);
    }
  }, 600_000);

  test("a_second_open_while_the_first_pod_is_open_is_segment_locked_with_nothing_written", async () => {
    const storeDir = join(dir.root, "held");
    const first = await Pod.open(dir.manifest, {
      worker: new Worker({ client: new ScriptedLlmClient(() => ({ content: "one" })) }),
      store: new FileSegmentStore(storeDir),
      env: dir.env,
    });
    // Nothing is written before the first turn, yet the pod is already held.
    const other = new FileSegmentStore(storeDir);
    await expect(
      Pod.open(dir.manifest, {
        worker: new Worker({ client: new ScriptedLlmClient(() => ({ content: "two" })) }),
        store: other,
        env: dir.env,
      }),
    ).rejects.toMatchObject({ code: "SEGMENT_LOCKED" });
    await first.run("hello");
    await first.close();
    // Closed: the next open restores the same conversation instead of starting another.
    const worker = new Worker({ client: new ScriptedLlmClient(() => ({ content: "three" })) });
    const again = await Pod.open(dir.manifest, { worker, store: other, env: dir.env });
    expect(again.segmentId).toBe(first.segmentId);
    expect(worker.getHistory().map((m) => m.content)).toEqual(["hello", "one"]);
    await again.close();
    expect(await other.listSegments()).toHaveLength(1);
  });

  test("open_restores_the_latest_segment_and_starts_the_first_when_there_is_none", async () => {
    const store = new MemorySegmentStore();
    const worker = new Worker({ client: new ScriptedLlmClient((_r, i) => ({ content: `a${i}` })) });
    const pod = await Pod.open(dir.manifest, { worker, store, env: dir.env });
    expect(pod.isMaterialized).toBe(false);
    await pod.run("q1");
    await pod.close();
    const next = new Worker({ client: new ScriptedLlmClient(() => ({ content: "a1" })) });
    const restored = await Pod.open(dir.manifest, { worker: next, store, env: dir.env });
    expect(restored.isMaterialized).toBe(true);
    await restored.run("q2");
    await restored.close();
    expect(await store.listSegments()).toHaveLength(1);
    expect(next.getHistory().map((m) => m.content)).toEqual(["q1", "a0", "q2", "a1"]);
  });
});
