import { describe, expect, test } from "vitest";
import type { LlmRequest, LlmResponse } from "./llm-client.ts";
import { ScriptedLlmClient } from "./scripted-llm-client.ts";
import { echoTool, failingTool } from "./test-tools.ts";

const request = (content: string): LlmRequest => ({
  systemPrompt: "sys",
  messages: [{ role: "user", content }],
  tools: [{ name: "t", description: "d", inputSchema: { type: "object" } }],
});

describe("ScriptedLlmClient", () => {
  test("answers_in_order_and_records_every_request", async () => {
    const client = new ScriptedLlmClient([
      { content: "one" },
      { content: "two", toolCalls: [{ id: "1", name: "t", input: {} }] },
    ]);
    expect(await client.complete(request("a"))).toEqual({ content: "one" });
    expect(await client.complete(request("b"))).toEqual({
      content: "two",
      toolCalls: [{ id: "1", name: "t", input: {} }],
    });
    expect(client.requests).toEqual([request("a"), request("b")]);
  });

  test("recorded_requests_are_deep_frozen_deep_copies", async () => {
    const client = new ScriptedLlmClient([{ content: "x" }]);
    const sent = { systemPrompt: "sys", messages: [{ role: "user" as const, content: "a" }], tools: [] };
    await client.complete(sent);
    sent.messages.push({ role: "user", content: "mutated later" });
    sent.systemPrompt = "changed";
    const [recorded] = client.requests;
    expect(recorded).toEqual({ systemPrompt: "sys", messages: [{ role: "user", content: "a" }], tools: [] });
    expect(Object.isFrozen(recorded)).toBe(true);
    expect(Object.isFrozen(recorded!.messages)).toBe(true);
    expect(Object.isFrozen(recorded!.messages[0])).toBe(true);
    expect(Object.isFrozen(client.requests)).toBe(true);
  });

  test("running_past_the_end_of_the_script_names_the_count", async () => {
    const client = new ScriptedLlmClient([{ content: "only" }, { content: "two" }]);
    await client.complete(request("a"));
    await client.complete(request("b"));
    await expect(client.complete(request("c"))).rejects.toThrow(
      "ScriptedLlmClient received request 3 but only 2 responses were scripted; add responses to the script",
    );
    await expect(new ScriptedLlmClient([]).complete(request("a"))).rejects.toThrow(
      "ScriptedLlmClient received request 1 but only 0 responses were scripted",
    );
    await expect(
      new ScriptedLlmClient([{ content: "x" }]).complete(request("a")).then(() => undefined),
    ).resolves.toBeUndefined();
    expect(client.requests).toHaveLength(3);
  });

  test("script_function_gets_the_recorded_request_and_its_index", async () => {
    const seen: [string, number][] = [];
    const client = new ScriptedLlmClient(async (req, index) => {
      seen.push([(req.messages[0] as { content: string }).content, index]);
      return { content: `answer ${index}` };
    });
    expect((await client.complete(request("a"))).content).toBe("answer 0");
    expect((await client.complete(request("b"))).content).toBe("answer 1");
    expect(seen).toEqual([
      ["a", 0],
      ["b", 1],
    ]);
  });

  test("responses_are_fresh_copies_of_the_script", async () => {
    const script: LlmResponse[] = [{ content: "x", toolCalls: [{ id: "1", name: "t", input: { n: 1 } }] }];
    const client = new ScriptedLlmClient(script);
    (script[0]!.toolCalls![0]!.input as { n: number }).n = 2;
    const response = await client.complete(request("a"));
    expect(response.toolCalls![0]!.input).toEqual({ n: 1 });
    expect(response).not.toBe(script[0]);
  });

  test("test_tools_echo_and_fail", async () => {
    const options = { signal: new AbortController().signal };
    expect(await echoTool("e").execute({ a: [1, "b"] }, options)).toBe('{"a":[1,"b"]}');
    expect(await echoTool("e").execute(undefined, options)).toBe("undefined");
    expect(() => failingTool("f", "broken").execute({}, options)).toThrow("broken");
    expect(failingTool("f", "broken").name).toBe("f");
  });
});
