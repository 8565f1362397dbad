import { spawn } from "node:child_process";
import { join } from "node:path";
import { FileSegmentStore } from "@insomnia/segment-store";
import { Worker } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterAll, beforeAll, expect, test } from "vitest";
import { BUILT_PACKAGE } from "./__fixtures__/built-package.ts";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { Pod } from "./pod.ts";

const packageDir = join(import.meta.dirname, "..");
let dir: PodDir;

beforeAll(async () => {
  dir = await makePodDir("You are a pod.\n");
});

afterAll(async () => {
  await dir.cleanup();
});

/** Runs turn-child.mjs until it has logged the user message, then kills it with SIGKILL: a crash mid-turn. */
function crashMidTurn(storeDir: string, segmentId: string, turnId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(packageDir, "src", "__fixtures__", "turn-child.mjs"), BUILT_PACKAGE, storeDir, segmentId, turnId],
      { cwd: packageDir, stdio: ["ignore", "pipe", "inherit"] },
    );
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      if (text.includes("logged")) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("close", (_code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`the child ended without crashing (${signal})`)),
    );
  });
}

async function restored(storeDir: string, segmentId: string, answers: string[]) {
  const client = new ScriptedLlmClient(answers.map((content) => ({ content })));
  const worker = new Worker({ client });
  const pod = await Pod.restore(new FileSegmentStore(storeDir), segmentId, worker);
  return { client, worker, pod };
}

test("a_turn_id_retried_after_a_crash_continues_the_turn_and_after_success_returns_it_without_a_model_call", async () => {
  const storeDir = join(dir.root, "segments");
  const first = new Worker({ client: new ScriptedLlmClient([{ content: "hello" }]) });
  const pod = await Pod.fromManifest(dir.manifest, {
    worker: first,
    store: new FileSegmentStore(storeDir),
    clock: countingClock(),
    env: dir.env,
  });
  await pod.run("hi", { turnId: "turn-1" });
  const segmentId = pod.segmentId!;
  await pod.close();

  // The process that ran turn-2 died after logging its message.
  await crashMidTurn(storeDir, segmentId, "turn-2");

  // The client retries turn-2 in a new process: the turn continues, its message is not sent twice.
  const second = await restored(storeDir, segmentId, ["the answer"]);
  const retried = await second.pod.run("the question", { turnId: "turn-2" });
  expect(retried.final).toBe("the answer");
  expect(second.client.requests).toHaveLength(1);
  expect(second.client.requests[0]!.messages.filter((m) => m.role === "user")).toEqual([
    { role: "user", content: "hi", turnId: "turn-1" },
    { role: "user", content: "the question", turnId: "turn-2" },
  ]);
  await second.pod.close();

  // Retried again after it finished, and turn-1 too: stored results, no model call.
  const third = await restored(storeDir, segmentId, []);
  expect((await third.pod.run("the question", { turnId: "turn-2" })).final).toBe("the answer");
  expect((await third.pod.run("hi", { turnId: "turn-1" })).final).toBe("hello");
  expect(third.client.requests).toHaveLength(0);
  expect(third.worker.getHistory()).toHaveLength(4);
  await third.pod.close();
});
