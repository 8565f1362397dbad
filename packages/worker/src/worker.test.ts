import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { LlmRequest, LlmResponse } from "./llm-client.ts";
import type { Message } from "./message.ts";
import { ScriptedLlmClient } from "./scripted-llm-client.ts";
import { echoTool, failingTool } from "./test-tools.ts";
import { caught, deferred } from "./__fixtures__/async.ts";
import { Worker } from "./worker.ts";
import { WorkerError } from "./worker-error.ts";

const PROMPT = "You are a careful agent.\n\n---\n## Working boundaries\n\nReadable:\n  - /tmp/x\n";

function worker(script: ConstructorParameters<typeof ScriptedLlmClient>[0], options: { maxIterations?: number } = {}) {
  const client = new ScriptedLlmClient(script);
  const w = new Worker({ client, ...options });
  w.setSystemPrompt(PROMPT);
  return { client, worker: w };
}

const echoDefinition = { name: "echo", description: "Echoes its input as JSON.", inputSchema: { type: "object" } };

describe("Worker.run", () => {
  test("loop_with_two_tool_calls_then_final_answer", async () => {
    const { client, worker: w } = worker([
      {
        content: "Let me look.",
        toolCalls: [
          { id: "c1", name: "echo", input: { path: "a.txt" } },
          { id: "c2", name: "echo", input: { path: "b.txt" } },
        ],
      },
      { content: "Both files say hello." },
    ]);
    w.tools.register(echoTool("echo"));

    const result = await w.run("read a and b");

    const user: Message = { role: "user", content: "read a and b" };
    const assistant: Message = {
      role: "assistant",
      content: "Let me look.",
      toolCalls: [
        { id: "c1", name: "echo", input: { path: "a.txt" } },
        { id: "c2", name: "echo", input: { path: "b.txt" } },
      ],
    };
    const tool1: Message = { role: "tool", toolCallId: "c1", name: "echo", content: '{"path":"a.txt"}' };
    const tool2: Message = { role: "tool", toolCallId: "c2", name: "echo", content: '{"path":"b.txt"}' };
    const final: Message = { role: "assistant", content: "Both files say hello." };

    expect(client.requests).toEqual([
      { systemPrompt: PROMPT, messages: [user], tools: [echoDefinition] },
      { systemPrompt: PROMPT, messages: [user, assistant, tool1, tool2], tools: [echoDefinition] },
    ]);
    expect(result).toEqual({
      messages: [user, assistant, tool1, tool2, final],
      final: "Both files say hello.",
      iterations: 2,
    });
    expect(w.getHistory()).toEqual([user, assistant, tool1, tool2, final]);
  });

  test("second_run_continues_the_history", async () => {
    const { client, worker: w } = worker([{ content: "one" }, { content: "two" }]);
    await w.run("first");
    const result = await w.run("second");
    expect(result).toEqual({
      messages: [
        { role: "user", content: "second" },
        { role: "assistant", content: "two" },
      ],
      final: "two",
      iterations: 1,
    });
    expect(client.requests[1]!.messages).toEqual([
      { role: "user", content: "first" },
      { role: "assistant", content: "one" },
      { role: "user", content: "second" },
    ]);
  });

  test("unknown_tool_becomes_an_error_message_and_the_loop_continues", async () => {
    const { client, worker: w } = worker([
      { content: "", toolCalls: [{ id: "c1", name: "nope", input: {} }] },
      { content: "sorry" },
    ]);
    w.tools.register(echoTool("echo"));
    const result = await w.run("go");
    const toolMessage = {
      role: "tool",
      toolCallId: "c1",
      name: "nope",
      content: 'unknown tool "nope"; available tools: echo',
      isError: true,
    };
    expect(result.messages[2]).toEqual(toolMessage);
    expect(result.final).toBe("sorry");
    expect(client.requests[1]!.messages.at(-1)).toEqual(toolMessage);
  });

  test("throwing_tool_becomes_an_error_message_and_the_loop_continues", async () => {
    const { client, worker: w } = worker([
      {
        content: "",
        toolCalls: [
          { id: "c1", name: "boom", input: {} },
          { id: "c2", name: "echo", input: 1 },
        ],
      },
      { content: "recovered" },
    ]);
    w.tools.register(failingTool("boom", "permission denied: /etc/shadow"));
    w.tools.register(echoTool("echo"));
    const result = await w.run("go");
    expect(result.messages.slice(2, 4)).toEqual([
      { role: "tool", toolCallId: "c1", name: "boom", content: "permission denied: /etc/shadow", isError: true },
      { role: "tool", toolCallId: "c2", name: "echo", content: "1" },
    ]);
    expect(result).toMatchObject({ final: "recovered", iterations: 2 });
    expect(client.requests).toHaveLength(2);
  });

  test("max_iterations_stops_the_loop_and_resume_continues", async () => {
    const call = (id: string) => ({ content: "", toolCalls: [{ id, name: "echo", input: id }] });
    const { client, worker: w } = worker([call("c1"), call("c2"), call("c3"), { content: "done" }], {
      maxIterations: 2,
    });
    w.tools.register(echoTool("echo"));
    const error = await caught(w.run("loop"));
    expect(error.code).toBe("MAX_ITERATIONS");
    expect(error.message).toBe(
      "the model still requested tools after 2 client calls (maxIterations 2); the history ends with the tool results, so resume() continues, or raise maxIterations",
    );
    expect(client.requests).toHaveLength(2);
    expect(w.getHistory().map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);

    const resumed = await w.resume();
    expect(resumed.iterations).toBe(2);
    expect(resumed.final).toBe("done");
    expect(resumed.messages.map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
  });

  test("run_without_a_system_prompt_fails_before_anything_happens", async () => {
    const client = new ScriptedLlmClient([{ content: "never" }]);
    const seen: Message[] = [];
    const w = new Worker({ client, onMessage: (m) => void seen.push(m) });
    let factoryCalls = 0;
    w.tools.registerFactory(() => {
      factoryCalls += 1;
      return echoTool("echo");
    });
    for (const attempt of [w.run("hi"), w.resume()]) {
      const error = await caught(attempt);
      expect(error.code).toBe("NO_SYSTEM_PROMPT");
      expect(error.message).toBe("no system prompt is set; call setSystemPrompt(prompt) before run() or resume()");
    }
    expect(client.requests).toEqual([]);
    expect(w.getHistory()).toEqual([]);
    expect(seen).toEqual([]);
    expect(factoryCalls).toBe(0);
    expect(w.getSystemPrompt()).toBeUndefined();
  });

  test("run_flushes_pending_tool_factories", async () => {
    const { client, worker: w } = worker([
      { content: "", toolCalls: [{ id: "c1", name: "lazy", input: "x" }] },
      { content: "ok" },
    ]);
    let calls = 0;
    w.tools.registerFactory(() => {
      calls += 1;
      return echoTool("lazy");
    });
    expect(calls).toBe(0);
    const result = await w.run("go");
    expect(calls).toBe(1);
    expect(result.messages[2]).toEqual({ role: "tool", toolCallId: "c1", name: "lazy", content: '"x"' });
    expect(client.requests[0]!.tools.map((t) => t.name)).toEqual(["lazy"]);
  });

  test("client_failure_is_client_failed_with_cause_and_resume_retries", async () => {
    const outage = new Error("503 from the gateway");
    let failNext = true;
    const { client, worker: w } = worker(() => {
      if (failNext) {
        failNext = false;
        throw outage;
      }
      return { content: "back" };
    });
    const error = await caught(w.run("hello"));
    expect(error.code).toBe("CLIENT_FAILED");
    expect(error.cause).toBe(outage);
    expect(error.message).toBe("the LLM client failed: 503 from the gateway; resume() retries");
    expect(w.getHistory()).toEqual([{ role: "user", content: "hello" }]);

    const resumed = await w.resume();
    expect(resumed).toEqual({ messages: [{ role: "assistant", content: "back" }], final: "back", iterations: 1 });
    expect(client.requests.map((r) => r.messages)).toEqual([
      [{ role: "user", content: "hello" }],
      [{ role: "user", content: "hello" }],
    ]);
  });

  test("invalid_client_response_is_client_failed", async () => {
    const bad = [
      [null, "expected an object"],
      [{ content: 3 }, "content must be a string, got number"],
      [{ content: "", toolCalls: {} }, "toolCalls must be an array, got an object"],
      [{ content: "", toolCalls: [{ id: 1, name: "x", input: {} }] }, "toolCalls[0].id must be a string, got a number"],
      [
        { content: "", toolCalls: [{ id: "1", name: "x", input: () => 1 }] },
        "toolCalls[0].input must be plain data (it could not be cloned)",
      ],
    ] as const;
    for (const [response, problem] of bad) {
      const w = new Worker({ client: { complete: async () => response as unknown as LlmResponse } });
      w.setSystemPrompt(PROMPT);
      const error = await caught(w.run("x"));
      expect(error.code).toBe("CLIENT_FAILED");
      expect(error.message).toBe(`the LLM client returned an invalid response: ${problem}; fix the client adapter`);
    }
  });

  test("empty_tool_call_list_is_a_final_answer", async () => {
    const { worker: w } = worker([{ content: "done", toolCalls: [] }]);
    const result = await w.run("x");
    expect(result).toEqual({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "done" },
      ],
      final: "done",
      iterations: 1,
    });
  });

  test("run_with_a_non_string_input_is_invalid_argument", async () => {
    const { worker: w } = worker([]);
    expect((await caught(w.run(42 as unknown as string))).code).toBe("INVALID_ARGUMENT");
  });
});

describe("system prompt", () => {
  test("system_prompt_is_byte_identical_across_many_turns", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary", maxLength: 200 }),
        fc.integer({ min: 1, max: 6 }),
        async (prompt, turns) => {
          const client = new ScriptedLlmClient((_request, index) =>
            index % 2 === 0
              ? { content: "", toolCalls: [{ id: `c${index}`, name: "echo", input: index }] }
              : { content: `a${index}` },
          );
          const w = new Worker({ client });
          w.tools.register(echoTool("echo"));
          w.setSystemPrompt(prompt);
          for (let turn = 0; turn < turns; turn++) await w.run(`turn ${turn}`);
          expect(client.requests).toHaveLength(turns * 2);
          for (const request of client.requests) {
            expect(request.systemPrompt).toBe(prompt);
            expect(Buffer.from(request.systemPrompt, "utf16le").equals(Buffer.from(prompt, "utf16le"))).toBe(true);
          }
          expect(w.getSystemPrompt()).toBe(prompt);
        },
      ),
      { numRuns: 50 },
    );
  });

  test("lone_surrogates_and_whitespace_survive_unchanged", async () => {
    const prompt = "  \uD800 trailing\r\n\t\u0000 \uFEFF  \n\n";
    const { client, worker: w } = worker([{ content: "a" }, { content: "b" }]);
    w.setSystemPrompt(prompt);
    await w.run("1");
    await w.run("2");
    expect(client.requests.map((r) => r.systemPrompt)).toEqual([prompt, prompt]);
  });

  test("a_new_system_prompt_applies_from_the_next_client_call", async () => {
    const client = new ScriptedLlmClient((_request, index) => {
      if (index === 0) {
        w.setSystemPrompt("second");
        return { content: "", toolCalls: [{ id: "c", name: "echo", input: null }] };
      }
      return { content: "done" };
    });
    const w = new Worker({ client });
    w.tools.register(echoTool("echo"));
    w.setSystemPrompt("first");
    await w.run("go");
    expect(client.requests.map((r) => r.systemPrompt)).toEqual(["first", "second"]);
    expect(w.getSystemPrompt()).toBe("second");
  });

  test("set_system_prompt_rejects_non_strings", () => {
    const { worker: w } = worker([]);
    expect(() => w.setSystemPrompt(undefined as unknown as string)).toThrow(
      "the system prompt must be a string, got undefined",
    );
    expect(w.getSystemPrompt()).toBe(PROMPT);
  });
});

describe("history and resume", () => {
  const restored: Message[] = [
    { role: "user", content: "list files" },
    { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "echo", input: { dir: "." } }] },
    { role: "tool", toolCallId: "c1", name: "echo", content: "a.txt" },
  ];

  test("set_history_then_resume_calls_the_client_from_the_history", async () => {
    const { client, worker: w } = worker([{ content: "There is a.txt." }]);
    w.tools.register(echoTool("echo"));
    w.setHistory(restored);
    const result = await w.resume();
    expect(client.requests).toEqual([{ systemPrompt: PROMPT, messages: restored, tools: [echoDefinition] }]);
    expect(result).toEqual({
      messages: [{ role: "assistant", content: "There is a.txt." }],
      final: "There is a.txt.",
      iterations: 1,
    });
    expect(w.getHistory()).toEqual([...restored, { role: "assistant", content: "There is a.txt." }]);
  });

  test("resume_after_a_user_message_calls_the_client", async () => {
    const { client, worker: w } = worker([{ content: "hi" }]);
    w.setHistory([{ role: "user", content: "hello" }]);
    expect((await w.resume()).final).toBe("hi");
    expect(client.requests[0]!.messages).toEqual([{ role: "user", content: "hello" }]);
  });

  test("resume_after_a_final_answer_returns_an_empty_result", async () => {
    const { client, worker: w } = worker([]);
    w.setHistory([...restored, { role: "assistant", content: "There is a.txt." }]);
    expect(await w.resume()).toEqual({ messages: [], final: "There is a.txt.", iterations: 0 });
    expect(client.requests).toEqual([]);
  });

  test("resume_with_an_empty_history_returns_an_empty_result", async () => {
    const { client, worker: w } = worker([]);
    expect(await w.resume()).toEqual({ messages: [], final: "", iterations: 0 });
    expect(client.requests).toEqual([]);
  });

  test("resume_runs_tool_calls_left_unanswered", async () => {
    const { client, worker: w } = worker([{ content: "ok" }]);
    w.tools.register(echoTool("echo"));
    w.setHistory([
      { role: "user", content: "two things" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "c1", name: "echo", input: 1 },
          { id: "c2", name: "echo", input: 2 },
        ],
      },
      { role: "tool", toolCallId: "c1", name: "echo", content: "1" },
    ]);
    const result = await w.resume();
    expect(result.messages).toEqual([
      { role: "tool", toolCallId: "c2", name: "echo", content: "2" },
      { role: "assistant", content: "ok" },
    ]);
    expect(client.requests[0]!.messages.at(-1)).toEqual({ role: "tool", toolCallId: "c2", name: "echo", content: "2" });
  });

  test("get_history_returns_a_frozen_copy", async () => {
    const { worker: w } = worker([{ content: "a" }]);
    await w.run("q");
    const history = w.getHistory();
    expect(Object.isFrozen(history)).toBe(true);
    expect(Object.isFrozen(history[0])).toBe(true);
    expect(() => (history as Message[]).push({ role: "user", content: "x" })).toThrow(TypeError);
    expect(w.getHistory()).toHaveLength(2);
    expect(w.getHistory()).not.toBe(history);
  });

  test("set_history_copies_its_input", () => {
    const { worker: w } = worker([]);
    const input = [
      { role: "assistant" as const, content: "x", toolCalls: [{ id: "1", name: "t", input: { a: [1] } }] },
    ];
    w.setHistory(input);
    input[0]!.toolCalls[0]!.input.a.push(2);
    expect(w.getHistory()).toEqual([
      { role: "assistant", content: "x", toolCalls: [{ id: "1", name: "t", input: { a: [1] } }] },
    ]);
    expect(Object.isFrozen(input[0])).toBe(false);
  });

  test("set_history_rejects_invalid_messages", () => {
    const { worker: w } = worker([]);
    w.setHistory([{ role: "user", content: "kept" }]);
    const bad: [unknown, string][] = [
      [{ role: "system", content: "x" }, 'role must be "user", "assistant" or "tool", got "system"'],
      [{ role: "user" }, "content must be a string, got undefined"],
      [{ role: "tool", toolCallId: "1", content: "x" }, "name must be a string, got undefined"],
      ["hello", "a message must be an object, got a string"],
    ];
    for (const [message, problem] of bad) {
      let error: unknown;
      try {
        w.setHistory([{ role: "user", content: "fine" }, message as Message]);
      } catch (e) {
        error = e;
      }
      expect(WorkerError.is(error) && error.code).toBe("INVALID_ARGUMENT");
      expect((error as Error).message).toBe(`setHistory: message 1: ${problem}`);
    }
    expect(w.getHistory()).toEqual([{ role: "user", content: "kept" }]);
  });

  test("set_history_while_a_run_is_active_is_busy", async () => {
    const gate = deferred();
    const { worker: w } = worker(async () => {
      await gate.promise;
      return { content: "late" };
    });
    const running = w.run("q");
    expect(w.busy).toBe(true);
    let error: unknown;
    try {
      w.setHistory([]);
    } catch (e) {
      error = e;
    }
    expect(WorkerError.is(error) && error.code).toBe("BUSY");
    gate.resolve();
    await running;
    expect(w.busy).toBe(false);
    w.setHistory([]);
    expect(w.getHistory()).toEqual([]);
  });
});

describe("concurrency", () => {
  test("concurrent_runs_are_serialized", async () => {
    const gates = [deferred(), deferred()];
    const client = new ScriptedLlmClient(async (request, index) => {
      if (index === 0) {
        await gates[0]!.promise;
        return { content: "", toolCalls: [{ id: "c1", name: "echo", input: "first" }] };
      }
      if (index === 1) {
        await gates[1]!.promise;
        return { content: "first done" };
      }
      return { content: `reply to ${(request.messages.at(-1) as { content: string }).content}` };
    });
    const w = new Worker({ client });
    w.tools.register(echoTool("echo"));
    w.setSystemPrompt(PROMPT);

    const first = w.run("one");
    const second = w.run("two");
    // Drain every pending microtask: the second run must still be waiting for the first.
    await new Promise<void>((r) => setImmediate(r));
    expect(client.requests).toHaveLength(1);
    expect(w.getHistory()).toEqual([{ role: "user", content: "one" }]);
    gates[0]!.resolve();
    gates[1]!.resolve();
    const [r1, r2] = await Promise.all([first, second]);

    expect(r1.messages.map((m) => m.content)).toEqual(["one", "", '"first"', "first done"]);
    expect(r2.messages.map((m) => m.content)).toEqual(["two", "reply to two"]);
    expect(client.requests[2]!.messages.map((m) => m.content)).toEqual(["one", "", '"first"', "first done", "two"]);
    expect(w.getHistory().map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"]);
  });

  test("a_failed_run_does_not_block_the_queue", async () => {
    const client = new ScriptedLlmClient((_request, index) => {
      if (index === 0) throw new Error("boom");
      return { content: "fine" };
    });
    const w = new Worker({ client });
    w.setSystemPrompt(PROMPT);
    const first = caught(w.run("a"));
    const second = w.run("b");
    expect((await first).code).toBe("CLIENT_FAILED");
    expect((await second).final).toBe("fine");
    expect(w.getHistory().map((m) => m.content)).toEqual(["a", "b", "fine"]);
  });

  test("many_concurrent_runs_keep_their_turns_contiguous", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 8 }), async (toolCounts) => {
        // Each run i makes toolCounts[i] tool round-trips; client answers yield to the event loop.
        const client = new ScriptedLlmClient(async (request) => {
          await new Promise<void>((r) => setImmediate(r));
          const lastUser = [...request.messages].reverse().find((m) => m.role === "user")!;
          const run = Number(lastUser.content);
          const since = request.messages.length - 1 - request.messages.lastIndexOf(lastUser);
          const round = since / 2;
          return round < toolCounts[run]!
            ? { content: "", toolCalls: [{ id: `r${run}-${round}`, name: "echo", input: run }] }
            : { content: `end ${run}` };
        });
        const w = new Worker({ client });
        w.tools.register(echoTool("echo"));
        w.setSystemPrompt(PROMPT);
        const results = await Promise.all(toolCounts.map((_, i) => w.run(String(i))));
        const expected = toolCounts.flatMap((count, run) => [
          `user:${run}`,
          ...Array.from({ length: count }, () => [`assistant:`, `tool:${run}`]).flat(),
          `assistant:end ${run}`,
        ]);
        expect(w.getHistory().map((m) => `${m.role}:${m.content}`)).toEqual(expected);
        expect(results.map((r) => r.iterations)).toEqual(toolCounts.map((c) => c + 1));
      }),
      { numRuns: 30 },
    );
  });
});

describe("onMessage", () => {
  test("on_message_sees_every_new_message_in_order_and_is_awaited", async () => {
    const log: string[] = [];
    const client = new ScriptedLlmClient((request: LlmRequest, index) => {
      // Every earlier message was logged before the client is called again.
      log.push(`client ${index} after ${request.messages.length} messages`);
      return index === 0
        ? {
            content: "",
            toolCalls: [
              { id: "c1", name: "echo", input: 1 },
              { id: "c2", name: "missing", input: 2 },
            ],
          }
        : { content: "end" };
    });
    const w = new Worker({
      client,
      onMessage: async (message) => {
        await new Promise<void>((r) => setImmediate(r));
        log.push(`${message.role}:${message.content}`);
        expect(Object.isFrozen(message)).toBe(true);
      },
    });
    w.tools.register(echoTool("echo"));
    w.setSystemPrompt(PROMPT);
    w.setHistory([{ role: "user", content: "restored, not reported" }]);
    const result = await w.run("go");
    expect(log).toEqual([
      "user:go",
      "client 0 after 2 messages",
      "assistant:",
      "tool:1",
      'tool:unknown tool "missing"; available tools: echo',
      "client 1 after 5 messages",
      "assistant:end",
    ]);
    expect(result.messages.map((m) => `${m.role}:${m.content}`)).toEqual(log.filter((l) => !l.startsWith("client")));
  });

  test("on_message_failure_stops_the_turn_and_the_message_is_not_appended", async () => {
    const diskFull = new Error("ENOSPC");
    let seen = 0;
    const client = new ScriptedLlmClient([
      { content: "", toolCalls: [{ id: "c1", name: "echo", input: 1 }] },
      { content: "end" },
    ]);
    const w = new Worker({
      client,
      onMessage: () => {
        seen += 1;
        if (seen === 3) throw diskFull;
      },
    });
    let executed = 0;
    w.tools.register({ ...echoTool("echo"), execute: () => String(++executed) });
    w.setSystemPrompt(PROMPT);
    await expect(w.run("go")).rejects.toBe(diskFull);
    expect(w.getHistory().map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(client.requests).toHaveLength(1);

    // resume answers the unanswered tool call, then asks the model again.
    const resumed = await w.resume();
    expect(resumed.messages).toEqual([
      { role: "tool", toolCallId: "c1", name: "echo", content: "2" },
      { role: "assistant", content: "end" },
    ]);
  });
});

describe("addMessageListener", () => {
  test("listeners_run_after_on_message_in_order_and_can_be_removed", async () => {
    const log: string[] = [];
    const client = new ScriptedLlmClient([{ content: "one" }, { content: "two" }]);
    const w = new Worker({ client, onMessage: (m) => void log.push(`option ${m.role}`) });
    const removeA = w.addMessageListener(async (m) => {
      await new Promise<void>((r) => setImmediate(r));
      log.push(`a ${m.role}`);
    });
    w.addMessageListener((m) => void log.push(`b ${m.role}`));
    w.setSystemPrompt(PROMPT);
    await w.run("hi");
    expect(log).toEqual(["option user", "a user", "b user", "option assistant", "a assistant", "b assistant"]);
    log.length = 0;
    removeA();
    removeA();
    await w.run("again");
    expect(log).toEqual(["option user", "b user", "option assistant", "b assistant"]);
    expect(() => w.addMessageListener(42 as unknown as () => void)).toThrow("addMessageListener needs a function");
  });

  test("a_listener_that_throws_keeps_the_message_out_of_the_history", async () => {
    const client = new ScriptedLlmClient([{ content: "never" }]);
    const w = new Worker({ client });
    const failure = new Error("log unavailable");
    w.addMessageListener(() => {
      throw failure;
    });
    w.setSystemPrompt(PROMPT);
    await expect(w.run("hi")).rejects.toBe(failure);
    expect(w.getHistory()).toEqual([]);
    expect(client.requests).toEqual([]);
  });
});

describe("options", () => {
  test("invalid_options_are_invalid_argument", () => {
    const client = new ScriptedLlmClient([]);
    for (const maxIterations of [0, -1, 1.5, Number.NaN]) {
      expect(() => new Worker({ client, maxIterations })).toThrow(
        `maxIterations must be a positive integer, got ${String(maxIterations)}`,
      );
    }
    expect(() => new Worker({} as unknown as { client: ScriptedLlmClient })).toThrow(
      "Worker needs a client with a complete(request) method",
    );
  });

  test("default_max_iterations_is_50", async () => {
    const { client, worker: w } = worker(() => ({ content: "", toolCalls: [{ id: "c", name: "echo", input: 0 }] }));
    w.tools.register(echoTool("echo"));
    expect((await caught(w.run("loop"))).code).toBe("MAX_ITERATIONS");
    expect(client.requests).toHaveLength(50);
  });
});

describe("hostile values from clients, tools and callers", () => {
  test("a_response_whose_fields_throw_when_read_is_client_failed", async () => {
    const boom = new Error("getter");
    const responses: unknown[] = [
      {
        get content(): string {
          throw boom;
        },
      },
      {
        content: "",
        toolCalls: [
          {
            id: "1",
            get name(): string {
              throw boom;
            },
            input: {},
          },
        ],
      },
      {
        content: "",
        toolCalls: new Proxy([], {
          get() {
            throw boom;
          },
        }),
      },
    ];
    for (const response of responses) {
      const w = new Worker({ client: { complete: async () => response as LlmResponse } });
      w.setSystemPrompt(PROMPT);
      const error = await w.run("go").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(WorkerError.is(error) && error.code).toBe("CLIENT_FAILED");
    }
  });

  test("a_thrown_value_with_a_throwing_message_getter_is_still_reported", async () => {
    const hostile = {
      get message(): string {
        throw new Error("m");
      },
    };
    const w = new Worker({
      client: {
        complete: async () => {
          throw hostile;
        },
      },
    });
    w.setSystemPrompt(PROMPT);
    const error = await w.run("go").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(WorkerError.is(error) && error.code).toBe("CLIENT_FAILED");
    expect((error as WorkerError).message).toContain("unprintable error");

    const tools = new Worker({
      client: new ScriptedLlmClient([
        { content: "", toolCalls: [{ id: "c", name: "t", input: {} }] },
        { content: "ok" },
      ]),
    });
    tools.tools.register({
      ...echoTool("t"),
      execute: () => {
        throw hostile;
      },
    });
    tools.setSystemPrompt(PROMPT);
    const result = await tools.run("go");
    expect(result.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(result.messages[2]).toMatchObject({ role: "tool", isError: true });
  });

  test("typed_arrays_in_tool_inputs_and_schemas_do_not_crash_the_freeze", async () => {
    const w = new Worker({
      client: new ScriptedLlmClient([
        { content: "", toolCalls: [{ id: "c", name: "t", input: new Uint8Array([1]) }] },
        { content: "ok" },
      ]),
    });
    w.tools.register({ ...echoTool("t"), inputSchema: { bytes: new Uint8Array([1]) } });
    w.setSystemPrompt(PROMPT);
    const result = await w.run("go");
    expect(result.final).toBe("ok");
  });

  test("set_history_with_a_throwing_getter_is_invalid_argument", () => {
    const w = new Worker({ client: new ScriptedLlmClient([]) });
    const message = {
      role: "user",
      get content(): string {
        throw new Error("h");
      },
    };
    const error = (() => {
      try {
        w.setHistory([message as unknown as Message]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(WorkerError.is(error) && error.code).toBe("INVALID_ARGUMENT");
    expect(w.getHistory()).toEqual([]);
  });
});
