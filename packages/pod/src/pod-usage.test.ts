import { Worker } from "@insomnia/worker";
import type { LlmResponse } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, describe, expect, test } from "vitest";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { Pod } from "./pod.ts";
import { FileSegmentStore } from "@insomnia/segment-store";

const dirs: PodDir[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.cleanup();
});

describe("usage in the segment log", () => {
  test("assistant_message_records_carry_the_usage_and_restore_keeps_it", async () => {
    const dir = await makePodDir("You are a pod.\n");
    dirs.push(dir);
    const usage = { inputTokens: 1200, outputTokens: 30, cacheReadTokens: 1100, cacheWriteTokens: 90 };
    const client = new ScriptedLlmClient((): LlmResponse => ({ content: "hi", usage }));
    const store = new FileSegmentStore(`${dir.root}/log`);
    const pod = await Pod.fromManifest(dir.manifest, {
      worker: new Worker({ client }),
      store,
      clock: countingClock("2025-01-02T03:04:05.000Z"),
      callClock: countingClock("2025-01-02T03:04:05.000Z"),
      env: dir.env,
    });
    await pod.run("hello");
    const segment = pod.segmentId!;
    await pod.close();

    const { records } = await store.readSegment(segment);
    expect(records.slice(1)).toEqual([
      { type: "message", version: 2, message: { role: "user", content: "hello" } },
      {
        type: "message",
        version: 2,
        message: { role: "assistant", content: "hi", usage },
        // What the call sent, hashed, beside the answer: the ledger's cache-break causes come from it.
        call: {
          sentAt: "2025-01-02T03:04:05.000Z",
          system: expect.stringMatching(/^[0-9a-f]{16}$/),
          tools: expect.stringMatching(/^[0-9a-f]{16}$/),
          messages: [expect.stringMatching(/^[0-9a-f]{16}$/)],
        },
      },
    ]);
    const worker = new Worker({ client });
    const restored = await Pod.restore(store, segment, worker);
    expect(worker.getHistory().at(-1)).toEqual({ role: "assistant", content: "hi", usage });
    await restored.close();
  });
});
