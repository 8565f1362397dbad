import { describe, expect, test } from "vitest";
import type { GuardedCall } from "./call-guard.ts";
import { ScriptedLlmClient } from "./scripted-llm-client.ts";
import { Worker } from "./worker.ts";
import { WorkerError } from "./worker-error.ts";

const SUMMARY = { role: "user", content: "summary" } as const;

describe("call guard", () => {
  test("before_each_call_the_guard_may_replace_the_history_and_the_call_sends_the_new_one", async () => {
    const client = new ScriptedLlmClient([{ content: "a1" }, { content: "a2" }]);
    const worker = new Worker({ client });
    worker.setSystemPrompt("S");
    const asked: GuardedCall["reason"][] = [];
    worker.setCallGuard(async (call) => {
      asked.push(call.reason);
      expect(call.request.systemPrompt).toBe("S");
      // Replace everything before the turn's message with a summary, on the second turn only.
      return call.request.messages.length > 1 ? [SUMMARY, call.request.messages.at(-1)!] : undefined;
    });
    await worker.run("one");
    await worker.run("two");
    expect(asked).toEqual(["before-call", "before-call"]);
    expect(client.requests[1]!.messages).toEqual([SUMMARY, { role: "user", content: "two" }]);
    expect(worker.getHistory().map((m) => m.content)).toEqual(["summary", "two", "a2"]);
  });

  test("a_failed_call_is_retried_once_only_when_the_guard_replaced_the_history", async () => {
    let calls = 0;
    const client = new ScriptedLlmClient(() => {
      calls += 1;
      throw Object.assign(new Error("too long"), { code: "CONTEXT_OVERFLOW" });
    });
    const worker = new Worker({ client });
    worker.setSystemPrompt("S");
    const reasons: string[] = [];
    worker.setCallGuard(async (call) => {
      reasons.push(call.reason);
      if (call.reason !== "call-failed") return undefined;
      expect(WorkerError.is(call.error) && call.error.code).toBe("CLIENT_FAILED");
      return [SUMMARY, { role: "user", content: "go" }];
    });
    await expect(worker.run("go")).rejects.toMatchObject({ code: "CLIENT_FAILED" });
    expect(calls).toBe(2); // the call and one retry, never a loop
    expect(reasons).toEqual(["before-call", "call-failed"]);

    const plain = new Worker({ client: new ScriptedLlmClient(() => Promise.reject(new Error("x"))) });
    plain.setSystemPrompt("S");
    plain.setCallGuard(async () => undefined);
    await expect(plain.run("go")).rejects.toMatchObject({ code: "CLIENT_FAILED" });
  });

  test("call_model_checks_the_answer_and_touches_no_history", async () => {
    const worker = new Worker({
      client: new ScriptedLlmClient([{ content: "sum", usage: { inputTokens: 5 } }, { content: 7 } as never]),
    });
    worker.setSystemPrompt("S");
    const seen: unknown[] = [];
    worker.addMessageListener((m) => {
      seen.push(m);
    });
    const answer = await worker.callModel({
      systemPrompt: "S",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
    });
    expect(answer).toEqual({ role: "assistant", content: "sum", usage: { inputTokens: 5 } });
    await expect(
      worker.callModel({ systemPrompt: "S", messages: [{ role: "user", content: "hi" }], tools: [] }),
    ).rejects.toMatchObject({ code: "CLIENT_FAILED" });
    expect([seen, worker.getHistory()]).toEqual([[], []]);
    expect(() => worker.setCallGuard(7 as never)).toThrow(/setCallGuard needs a function/);
  });
});
