import { InsomniaError } from "@insomnia/errors";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { contentCaptureFromEnv, errorType } from "./telemetry.ts";
import { ScriptedLlmClient } from "./scripted-llm-client.ts";
import { echoTool, failingTool } from "./test-tools.ts";
import { Worker } from "./worker.ts";
import type { WorkerTelemetry } from "./telemetry.ts";
import type { LlmClient } from "./llm-client.ts";

/** A worker whose spans go to an in-memory exporter (its own provider: no global state). */
function traced(client: LlmClient, telemetry: Omit<WorkerTelemetry, "tracerProvider"> = {}) {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const worker = new Worker({
    client,
    telemetry: {
      providerName: "anthropic",
      requestModel: "claude-sonnet-4-5",
      serverAddress: "api.anthropic.com",
      serverPort: 443,
      agentName: "reviewer",
      conversationId: () => "conv-1",
      captureMessageContent: false,
      ...telemetry,
      tracerProvider,
    },
  });
  worker.setSystemPrompt("You are terse.");
  return { worker, spans: () => exporter.getFinishedSpans() };
}

const byName = (spans: readonly ReadableSpan[], name: string): ReadableSpan[] => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

describe("worker spans (GenAI semantic conventions)", () => {
  it("a turn is an invoke_agent span with a chat span per model call and an execute_tool span per tool call under it", async () => {
    const client = new ScriptedLlmClient([
      {
        content: "",
        toolCalls: [{ id: "call-1", name: "echo", input: { text: "hi" } }],
        usage: { inputTokens: 1200, outputTokens: 30, cacheReadTokens: 1000, cacheWriteTokens: 150 },
        model: "claude-sonnet-4-5-20250929",
        responseId: "msg_01",
        finishReason: "tool_use",
      },
      {
        content: "Done.",
        usage: { inputTokens: 1300, outputTokens: 5, cacheReadTokens: 1150, cacheWriteTokens: 100 },
        model: "claude-sonnet-4-5-20250929",
        responseId: "msg_02",
        finishReason: "end_turn",
      },
    ]);
    const { worker, spans } = traced(client);
    worker.tools.register(echoTool("echo", "Echoes its input."));
    await worker.run("Say hi through echo.");

    const all = spans();
    expect(all.map((s) => s.name).sort()).toEqual([
      "chat claude-sonnet-4-5",
      "chat claude-sonnet-4-5",
      "execute_tool echo",
      "invoke_agent reviewer",
    ]);
    const [turn] = byName(all, "invoke_agent reviewer");
    expect(turn!.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(turn!)).toBeUndefined();
    expect(turn!.attributes).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.agent.name": "reviewer",
      "gen_ai.conversation.id": "conv-1",
      "gen_ai.usage.input_tokens": 2500,
      "gen_ai.usage.output_tokens": 35,
      "gen_ai.usage.cache_read.input_tokens": 2150,
      "gen_ai.usage.cache_creation.input_tokens": 250,
    });

    const chats = byName(all, "chat claude-sonnet-4-5").sort((a, b) =>
      String(a.attributes["gen_ai.response.id"]).localeCompare(String(b.attributes["gen_ai.response.id"])),
    );
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(chat)).toBe(turn!.spanContext().spanId);
      expect(chat.spanContext().traceId).toBe(turn!.spanContext().traceId);
      expect(chat.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(chats[0]!.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "server.address": "api.anthropic.com",
      "server.port": 443,
      "gen_ai.agent.name": "reviewer",
      "gen_ai.conversation.id": "conv-1",
      "gen_ai.response.model": "claude-sonnet-4-5-20250929",
      "gen_ai.response.id": "msg_01",
      "gen_ai.response.finish_reasons": ["tool_use"],
      "gen_ai.usage.input_tokens": 1200,
      "gen_ai.usage.output_tokens": 30,
      "gen_ai.usage.cache_read.input_tokens": 1000,
      "gen_ai.usage.cache_creation.input_tokens": 150,
    });

    const [tool] = byName(all, "execute_tool echo");
    expect(parentOf(tool!)).toBe(turn!.spanContext().spanId);
    expect(tool!.attributes).toEqual({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo",
      "gen_ai.tool.call.id": "call-1",
      "gen_ai.tool.type": "function",
      "gen_ai.tool.description": "Echoes its input.",
      "gen_ai.conversation.id": "conv-1",
    });
    // The tool ran between the two model calls.
    expect(tool!.startTime >= chats[0]!.endTime || tool!.startTime[0] >= chats[0]!.endTime[0]).toBe(true);
    // No content without the opt-in.
    for (const span of all) {
      expect(
        Object.keys(span.attributes).filter((k) => k.includes("messages") || k.includes("call.arguments")),
      ).toEqual([]);
    }
  });

  it("a failed model call ends its chat span and the turn's span with our error code as error.type", async () => {
    class ProviderError extends InsomniaError<"RATE_LIMITED"> {}
    const client: LlmClient = {
      complete: async () => {
        throw new ProviderError("RATE_LIMITED", "anthropic answered 429 after 3 attempts");
      },
    };
    const { worker, spans } = traced(client);
    await expect(worker.run("hello")).rejects.toMatchObject({ code: "CLIENT_FAILED" });
    const [chat] = byName(spans(), "chat claude-sonnet-4-5");
    const [turn] = byName(spans(), "invoke_agent reviewer");
    expect(chat!.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat!.attributes["error.type"]).toBe("RATE_LIMITED");
    expect(turn!.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn!.attributes["error.type"]).toBe("RATE_LIMITED");
    expect(turn!.status.message).toContain("429");
  });

  it("a tool that throws marks its execute_tool span failed (TOOL_FAILED without a code of its own); an unknown tool says UNKNOWN_TOOL", async () => {
    const client = new ScriptedLlmClient([
      {
        content: "",
        toolCalls: [
          { id: "a", name: "broken", input: {} },
          { id: "b", name: "nope", input: {} },
        ],
      },
      { content: "ok" },
    ]);
    const { worker, spans } = traced(client);
    worker.tools.register(failingTool("broken", "disk on fire"));
    await worker.run("go");
    const [broken] = byName(spans(), "execute_tool broken");
    const [unknown] = byName(spans(), "execute_tool nope");
    expect(broken!.status).toMatchObject({ code: SpanStatusCode.ERROR, message: "disk on fire" });
    expect(broken!.attributes["error.type"]).toBe("TOOL_FAILED");
    expect(unknown!.attributes["error.type"]).toBe("UNKNOWN_TOOL");
    // The turn itself succeeded: the model saw the failures as results.
    expect(byName(spans(), "invoke_agent reviewer")[0]!.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("an aborted turn reports ABORTED", async () => {
    const controller = new AbortController();
    const client: LlmClient = {
      complete: (_request, options) =>
        new Promise((_resolve, reject) => {
          options?.signal?.addEventListener("abort", () => reject(new Error("stopped")));
          controller.abort();
        }),
    };
    const { worker, spans } = traced(client);
    await expect(worker.run("hello", { signal: controller.signal })).rejects.toMatchObject({ code: "ABORTED" });
    for (const span of spans()) expect(span.attributes["error.type"]).toBe("ABORTED");
  });

  it("records prompts, answers and tool arguments/results only when content capture is on", async () => {
    const client = new ScriptedLlmClient([
      { content: "", toolCalls: [{ id: "c", name: "echo", input: { text: "x" } }], finishReason: "tool_use" },
      { content: "The tool said x.", finishReason: "end_turn" },
    ]);
    const { worker, spans } = traced(client, { captureMessageContent: true });
    worker.tools.register(echoTool("echo"));
    await worker.run("Echo x.");
    const chats = byName(spans(), "chat claude-sonnet-4-5");
    const last = chats.find((s) => s.attributes["gen_ai.response.finish_reasons"]?.toString() === "end_turn")!;
    expect(JSON.parse(String(last.attributes["gen_ai.system_instructions"]))).toEqual([
      { type: "text", content: "You are terse." },
    ]);
    expect(JSON.parse(String(last.attributes["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "Echo x." }] },
      { role: "assistant", parts: [{ type: "tool_call", id: "c", name: "echo", arguments: { text: "x" } }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c", result: '{"text":"x"}' }] },
    ]);
    expect(JSON.parse(String(last.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "The tool said x." }], finish_reason: "end_turn" },
    ]);
    const [tool] = byName(spans(), "execute_tool echo");
    expect(tool!.attributes["gen_ai.tool.call.arguments"]).toBe('{"text":"x"}');
    expect(tool!.attributes["gen_ai.tool.call.result"]).toBe('{"text":"x"}');
  });

  it("reads the content opt-in the way GenAI instrumentations do", () => {
    const on = (value: string | undefined) =>
      contentCaptureFromEnv({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value });
    expect([on("true"), on("TRUE"), on("SPAN_ONLY"), on("span_and_event")]).toEqual([true, true, true, true]);
    expect([on(undefined), on("false"), on("NO_CONTENT"), on("EVENT_ONLY"), on("1")]).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("names error.type by our code, the wrapped provider code of a client failure, or _OTHER", () => {
    class ToolError extends InsomniaError<"UNKNOWN_TOOL"> {}
    expect(errorType(new ToolError("UNKNOWN_TOOL", "x"))).toBe("UNKNOWN_TOOL");
    const wrapped = Object.assign(new Error("x"), { code: "CLIENT_FAILED", cause: { code: "CONTEXT_OVERFLOW" } });
    expect(errorType(wrapped)).toBe("CONTEXT_OVERFLOW");
    expect(errorType(new TypeError("x"))).toBe("TypeError");
    expect(errorType("a string")).toBe("_OTHER");
  });

  it("a model call outside a turn (a compaction's summary, callModel) gets its own chat span", async () => {
    const client = new ScriptedLlmClient([
      {
        content: "Summary.",
        usage: { inputTokens: 900, outputTokens: 40, cacheReadTokens: 800 },
        finishReason: "end_turn",
      },
    ]);
    const { worker, spans } = traced(client);
    const request = {
      systemPrompt: "You are terse.",
      messages: [{ role: "user" as const, content: "sum up" }],
      tools: [],
    };
    await expect(worker.callModel(request)).resolves.toMatchObject({ content: "Summary." });
    const [chat] = byName(spans(), "chat claude-sonnet-4-5");
    expect(spans()).toHaveLength(1);
    expect(chat!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.conversation.id": "conv-1",
      "gen_ai.usage.input_tokens": 900,
      "gen_ai.usage.cache_read.input_tokens": 800,
      "gen_ai.response.finish_reasons": ["end_turn"],
    });
  });

  it("without a registered SDK nothing is recorded and a turn runs as before", async () => {
    const worker = new Worker({ client: new ScriptedLlmClient([{ content: "hi" }]) });
    worker.setSystemPrompt("p");
    await expect(worker.run("x")).resolves.toMatchObject({ final: "hi" });
  });
});
