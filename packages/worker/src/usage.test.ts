import { describe, expect, test } from "vitest";
import { ScriptedLlmClient } from "./scripted-llm-client.ts";
import { Worker } from "./worker.ts";
import { WorkerError } from "./worker-error.ts";
import { caught } from "./__fixtures__/async.ts";

const PROMPT = "You are a careful agent.\n";

describe("usage on assistant messages", () => {
  test("usage_of_a_response_is_kept_on_the_assistant_message", async () => {
    const seen: unknown[] = [];
    const client = new ScriptedLlmClient([
      { content: "hi", usage: { inputTokens: 120, outputTokens: 4, cacheReadTokens: 100, cacheWriteTokens: 0 } },
    ]);
    const worker = new Worker({ client, onMessage: (m) => void seen.push(m) });
    worker.setSystemPrompt(PROMPT);
    const result = await worker.run("hello");
    const expected = {
      role: "assistant",
      content: "hi",
      usage: { inputTokens: 120, outputTokens: 4, cacheReadTokens: 100, cacheWriteTokens: 0 },
    };
    expect(result.messages[1]).toEqual(expected);
    expect(seen[1]).toEqual(expected);
  });

  test("usage_keeps_only_known_fields_and_an_empty_usage_is_none", async () => {
    const client = new ScriptedLlmClient([
      { content: "a", usage: { outputTokens: 3, extra: 9 } as never },
      { content: "b", usage: {} },
    ]);
    const worker = new Worker({ client });
    worker.setSystemPrompt(PROMPT);
    expect((await worker.run("one")).messages[1]).toEqual({
      role: "assistant",
      content: "a",
      usage: { outputTokens: 3 },
    });
    expect((await worker.run("two")).messages[1]).toEqual({ role: "assistant", content: "b" });
  });

  test("negative_or_fractional_token_counts_are_an_invalid_response", async () => {
    for (const usage of [{ inputTokens: -1 }, { outputTokens: 1.5 }, { cacheReadTokens: "3" }, 7]) {
      const worker = new Worker({ client: new ScriptedLlmClient([{ content: "x", usage } as never]) });
      worker.setSystemPrompt(PROMPT);
      const error = await caught(worker.run("go"));
      expect(WorkerError.is(error) && error.code).toBe("CLIENT_FAILED");
      expect(String((error as Error).message)).toMatch(/usage/);
    }
  });

  test("set_history_keeps_usage_so_a_restored_log_round_trips", () => {
    const worker = new Worker({ client: new ScriptedLlmClient([]) });
    const history = [
      { role: "user", content: "q" },
      { role: "assistant", content: "a", usage: { inputTokens: 10, cacheReadTokens: 8 } },
    ] as const;
    worker.setHistory(history);
    expect(worker.getHistory()).toEqual(history);
    expect(() => worker.setHistory([{ role: "assistant", content: "a", usage: { inputTokens: -2 } } as never])).toThrow(
      /usage\.inputTokens/,
    );
  });
});
