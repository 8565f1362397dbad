import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider, FakeReply, RecordedRequest } from "@insomnia/ai-sdk/testing";
import { afterEach, describe, expect, test } from "vitest";
import { BIN, runPod, useSandbox } from "../__fixtures__/sandbox.ts";
import type { PodRun } from "../__fixtures__/sandbox.ts";
import { startOtlpReceiver } from "../__fixtures__/otlp-receiver.ts";
import type { OtlpReceiver, ReceivedSpan } from "../__fixtures__/otlp-receiver.ts";

const { box } = useSandbox();

let fake: FakeProvider | undefined;
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await fake?.close();
  await receiver?.close();
  fake = undefined;
  receiver = undefined;
});

const MODEL = "claude-sonnet-4-5";
const INTERNAL = 1;
const CLIENT = 3;
const ERROR = 2;

/** A pod named `tracer` on Anthropic's wire (the fake provider), and a receiver for its spans. */
async function workspace(script: (request: RecordedRequest, index: number) => FakeReply) {
  fake = await startFakeProvider(script);
  receiver = await startOtlpReceiver();
  await box.write(".insomnia/prompts/instruction.md", "You are the test pod.\n");
  await box.write("notes.txt", "buy milk\n");
  await box.write(
    ".insomnia/pod.yaml",
    [
      "pod:",
      "  name: tracer",
      "worker:",
      '  instruction: "$workspace/instruction"',
      "  tools: [read_file]",
      "provider:",
      "  kind: anthropic",
      `  model: ${MODEL}`,
      `  base_url: ${fake.baseURL}`,
      "",
    ].join("\n"),
  );
  return { ...box.env, XDG_STATE_HOME: join(box.home, "state"), ANTHROPIC_API_KEY: "sk-ant-test" };
}

/** A tool call, then an answer: known usage figures with cache reads and writes. */
const readNotes = (_request: RecordedRequest, index: number): FakeReply =>
  index === 0
    ? {
        toolCalls: [{ id: "toolu_1", name: "read_file", input: { path: "notes.txt" } }],
        usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 3000 },
      }
    : { text: "It says buy milk.", usage: { input: 40, output: 8, cacheRead: 3000, cacheWrite: 150 } };

/** Points the pod at another fake provider. */
async function pointAt(provider: FakeProvider): Promise<void> {
  const file = join(box.ws, ".insomnia/pod.yaml");
  await box.write(
    ".insomnia/pod.yaml",
    (await readFile(file, "utf8")).replace(/base_url: .*/, `base_url: ${provider.baseURL}`),
  );
}

const otel = (protocol: string, extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver!.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  ...extra,
});

const named = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);
const one = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const found = named(spans, name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
};

/** The spans of one conversation in an encoding-independent form: ids replaced by names. */
function shape(spans: ReceivedSpan[]) {
  const nameOf = new Map(spans.map((s) => [s.spanId, s.name]));
  return spans
    .map((s) => ({
      name: s.name,
      parent: nameOf.get(s.parentSpanId) ?? null,
      kind: s.kind,
      status: s.status.code,
      attributes: Object.fromEntries(
        // What differs between two runs by design: the conversation, and the fake provider's port.
        Object.entries(s.attributes).filter(
          ([k]) => k !== "gen_ai.conversation.id" && k !== "gen_ai.response.id" && k !== "server.port",
        ),
      ),
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

async function conversationOverOtlp(protocol: string) {
  const env = await workspace(readNotes);
  const run = await runPod(["run", "What do my notes say?"], {
    cwd: box.ws,
    env: {
      ...env,
      ...otel(protocol, {
        OTEL_EXPORTER_OTLP_HEADERS: "x-team=blue",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test",
      }),
    },
  });
  expect(run.stderr).not.toContain("OTLP_UNSUPPORTED");
  expect([run.code, run.stdout]).toEqual([0, "It says buy milk.\n"]);
  // Flushed before the process exited: everything is here without waiting.
  return { env, spans: receiver!.spans(), requests: receiver!.requests };
}

describe("pod run exports spans over OTLP/HTTP", () => {
  test("http_json_carries_the_turn_its_model_calls_and_its_tool_call_with_genai_attributes", async () => {
    const { env, spans, requests } = await conversationOverOtlp("http/json");
    expect(requests.every((r) => r.path === "/v1/traces" && r.contentType === "application/json")).toBe(true);
    expect(requests[0]!.headers["x-team"]).toBe("blue");
    expect(spans.map((s) => s.name).sort()).toEqual([
      `chat ${MODEL}`,
      `chat ${MODEL}`,
      "execute_tool read_file",
      "invoke_agent tracer",
    ]);

    const turn = one(spans, "invoke_agent tracer");
    expect(turn.parentSpanId).toBe("");
    expect(turn.kind).toBe(INTERNAL);
    expect(turn.scope).toBe("@insomnia/worker");
    expect(turn.resource).toMatchObject({ "service.name": "pod", "deployment.environment.name": "test" });
    expect(turn.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": MODEL,
      "gen_ai.agent.name": "tracer",
      // The conventions' input tokens include the cached ones: Anthropic's input + cache read + cache write.
      "gen_ai.usage.input_tokens": 100 + 3000 + 40 + 3000 + 150,
      "gen_ai.usage.output_tokens": 28,
      "gen_ai.usage.cache_read.input_tokens": 3000,
      "gen_ai.usage.cache_creation.input_tokens": 3150,
    });

    const chats = named(spans, `chat ${MODEL}`);
    for (const chat of chats) {
      expect([chat.parentSpanId, chat.traceId, chat.kind]).toEqual([turn.spanId, turn.traceId, CLIENT]);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": MODEL,
        "gen_ai.response.model": MODEL,
        "server.address": "127.0.0.1",
        "server.port": Number(new URL(fake!.baseURL).port),
      });
      expect(chat.attributes["gen_ai.response.id"]).toMatch(/^msg_/);
    }
    const tool = one(spans, "execute_tool read_file");
    expect([tool.parentSpanId, tool.kind]).toEqual([turn.spanId, INTERNAL]);
    expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "read_file", "gen_ai.tool.call.id": "toolu_1" });
    // No prompt, answer or file content without the opt-in.
    expect(JSON.stringify(spans)).not.toContain("buy milk");

    // The ledger and the spans tell the same story, call by call.
    const log = await runPod(["log", "--json"], { cwd: box.ws, env });
    const ledger = JSON.parse(log.stdout) as {
      conversation: string;
      calls: { usage: Record<string, number> }[];
    };
    const byFinish = (reason: string) =>
      chats.find((c) => String(c.attributes["gen_ai.response.finish_reasons"]) === reason)!;
    const spanUsage = [byFinish("tool_use"), byFinish("end_turn")].map((c) => ({
      inputTokens: c.attributes["gen_ai.usage.input_tokens"],
      outputTokens: c.attributes["gen_ai.usage.output_tokens"],
      cacheReadTokens: c.attributes["gen_ai.usage.cache_read.input_tokens"],
      cacheWriteTokens: c.attributes["gen_ai.usage.cache_creation.input_tokens"],
    }));
    expect(spanUsage).toEqual(ledger.calls.map((call) => call.usage));
    for (const span of spans) expect(span.attributes["gen_ai.conversation.id"]).toBe(ledger.conversation);

    // A second turn continues the conversation: same conversation id, a new trace.
    await fake!.close();
    fake = await startFakeProvider(() => ({ text: "ok" }));
    await pointAt(fake);
    const before = receiver!.spans().length;
    const again = await runPod(["run", "Thanks"], { cwd: box.ws, env: { ...env, ...otel("http/json") } });
    expect(again.code).toBe(0);
    const second = receiver!.spans().slice(before);
    expect(second.map((s) => s.name).sort()).toEqual([`chat ${MODEL}`, "invoke_agent tracer"]);
    for (const span of second) expect(span.attributes["gen_ai.conversation.id"]).toBe(ledger.conversation);
    expect(second[0]!.traceId).not.toBe(turn.traceId);
  });

  test("http_protobuf_carries_the_same_spans_as_http_json", async () => {
    const json = shape((await conversationOverOtlp("http/json")).spans);
    // The same conversation again, as a new one, exported in protobuf to a new receiver.
    await fake!.close();
    await receiver!.close();
    fake = await startFakeProvider(readNotes);
    receiver = await startOtlpReceiver();
    await pointAt(fake);
    const run = await runPod(["run", "--new", "What do my notes say?"], {
      cwd: box.ws,
      env: {
        ...box.env,
        XDG_STATE_HOME: join(box.home, "state"),
        ANTHROPIC_API_KEY: "sk-ant-test",
        ...otel("http/protobuf"),
      },
    });
    expect(run.code).toBe(0);
    expect(receiver.requests.every((r) => r.contentType === "application/x-protobuf")).toBe(true);
    expect(shape(receiver.spans())).toEqual(json);
    expect(json.length).toBe(4);
  });

  test("a_failed_turn_is_flushed_before_pod_exits_with_our_code_as_error_type", async () => {
    const env = await workspace(() => ({
      status: 401,
      body: '{"type":"error","error":{"type":"authentication_error"}}',
    }));
    const run = await runPod(["run", "hello"], { cwd: box.ws, env: { ...env, ...otel("http/protobuf") } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("AUTH_FAILED");
    const spans = receiver!.spans();
    const turn = one(spans, "invoke_agent tracer");
    const chat = one(spans, `chat ${MODEL}`);
    for (const span of [turn, chat]) {
      expect(span.status.code).toBe(ERROR);
      expect(span.attributes["error.type"]).toBe("AUTH_FAILED");
    }
    expect(chat.status.message).toContain("401");
  });

  test("ctrl_c_mid_answer_flushes_the_interrupted_turn_marked_aborted_and_pod_resume_is_traced_too", async () => {
    let open!: () => void;
    const hold = new Promise<void>((resolve) => {
      open = resolve;
    });
    const env = await workspace((_request, index) =>
      index === 0 ? { pieces: ["Hel", "lo"], hold } : { text: "lo there", usage: { input: 12, output: 3 } },
    );
    const run = await new Promise<PodRun>((resolve) => {
      const child = spawn(process.execPath, [BIN, "run", "hi"], {
        cwd: box.ws,
        env: { PATH: process.env.PATH ?? "", ...env, ...otel("http/json") },
      });
      let stdout = "";
      let stderr = "";
      let sent = false;
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
        if (!sent && stdout.includes("Hel")) {
          sent = true;
          child.kill("SIGINT");
        }
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.stdin.end();
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    open();
    expect(run.code).toBe(130);
    const spans = receiver!.spans();
    const turn = one(spans, "invoke_agent tracer");
    const chat = one(spans, `chat ${MODEL}`);
    expect(chat.parentSpanId).toBe(turn.spanId);
    for (const span of [turn, chat])
      expect([span.status.code, span.attributes["error.type"]]).toEqual([ERROR, "ABORTED"]);

    // pod resume continues the turn: its own turn span, in the same conversation.
    const before = receiver!.spans().length;
    const resumed = await runPod(["resume"], { cwd: box.ws, env: { ...env, ...otel("http/protobuf") } });
    expect(resumed.code).toBe(0);
    const again = receiver!.spans().slice(before);
    expect(again.map((s) => s.name).sort()).toEqual([`chat ${MODEL}`, "invoke_agent tracer"]);
    const resumedTurn = one(again, "invoke_agent tracer");
    expect(resumedTurn.status.code).not.toBe(ERROR);
    expect(resumedTurn.attributes["gen_ai.conversation.id"]).toBe(turn.attributes["gen_ai.conversation.id"]);
    expect(resumedTurn.attributes["gen_ai.usage.output_tokens"]).toBe(3);
  });

  test("message_content_is_on_the_spans_only_with_the_genai_opt_in", async () => {
    const env = await workspace(readNotes);
    const run = await runPod(["run", "What do my notes say?"], {
      cwd: box.ws,
      env: { ...env, ...otel("http/json", { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }) },
    });
    expect(run.code).toBe(0);
    const spans = receiver!.spans();
    const tool = one(spans, "execute_tool read_file");
    expect(tool.attributes["gen_ai.tool.call.arguments"]).toBe('{"path":"notes.txt"}');
    expect(String(tool.attributes["gen_ai.tool.call.result"])).toContain("buy milk");
    const last = named(spans, `chat ${MODEL}`).find(
      (c) => String(c.attributes["gen_ai.response.finish_reasons"]) === "end_turn",
    )!;
    expect(JSON.parse(String(last.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "It says buy milk." }], finish_reason: "end_turn" },
    ]);
    expect(String(last.attributes["gen_ai.system_instructions"])).toContain("You are the test pod.");
  });

  test("without_an_otlp_endpoint_nothing_is_sent_and_the_exporter_is_never_read", async () => {
    const env = await workspace(readNotes);
    const preload = await box.write(
      "read-log.cjs",
      [
        'const fs = require("node:fs");',
        "const read = fs.readFileSync;",
        "const files = [];",
        "fs.readFileSync = function (file, ...rest) { files.push(String(file)); return read.call(this, file, ...rest); };",
        `process.on("exit", () => fs.writeFileSync(${JSON.stringify(join(box.home, "read.json"))}, JSON.stringify(files)));`,
        "",
      ].join("\n"),
      box.home,
    );
    const readFiles = async (extra: Record<string, string>) => {
      const run = await runPod(["run", "What do my notes say?"], {
        cwd: box.ws,
        env: { ...env, NODE_OPTIONS: `--require ${preload}`, ...extra },
      });
      expect(run.code).toBe(0);
      return (JSON.parse(await readFile(join(box.home, "read.json"), "utf8")) as string[]).filter((f) =>
        f.includes("dist"),
      );
    };
    const unset = await readFiles({});
    expect(unset.some((f) => f.endsWith("pod.cjs"))).toBe(true);
    expect(unset.filter((f) => f.includes("otlp"))).toEqual([]);
    expect(receiver!.requests).toEqual([]);
    // The control: with the variable the same run reads the exporter's bundle file and sends spans.
    const set = await readFiles(otel("http/json"));
    expect(set.filter((f) => f.endsWith("vendor/otlp.cjs")).length).toBe(1);
    expect(
      receiver!
        .spans()
        .map((s) => s.name)
        .sort(),
    ).toEqual([`chat ${MODEL}`, "invoke_agent tracer"]);
  });

  test("an_unsupported_protocol_is_a_warning_and_nothing_is_sent", async () => {
    const env = await workspace(() => ({ text: "hi" }));
    const run = await runPod(["run", "hello"], { cwd: box.ws, env: { ...env, ...otel("grpc") } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("OTLP_UNSUPPORTED");
    expect(receiver!.requests).toEqual([]);
  });
});

describe("a compaction's summary call is traced", () => {
  const COMPACT = "resources/prompts/compact.md";
  test("automatic_compaction_puts_the_summary_call_under_its_turn_and_pod_compact_exports_its_own", async () => {
    const instruction = await readFile(join(import.meta.dirname, "..", "..", "..", "..", COMPACT), "utf8");
    // The summary request ends with the compaction instruction.
    const isSummary = (r: RecordedRequest): boolean =>
      JSON.stringify((r.json as { messages?: unknown }).messages).includes(JSON.stringify(instruction).slice(1, 40));
    const env = await workspace((r, i) =>
      isSummary(r)
        ? { text: "SUMMARY: one.", usage: { cacheRead: 9000, input: 40, output: 30 } }
        : { text: `a${i}`, usage: { input: i === 0 ? 9000 : 200, output: 10 } },
    );
    const file = join(box.ws, ".insomnia/pod.yaml");
    await box.write(".insomnia/pod.yaml", `${await readFile(file, "utf8")}  context_window: 10000\n`);
    expect((await runPod(["run", "one"], { cwd: box.ws, env })).code).toBe(0);
    const second = await runPod(["run", "two"], { cwd: box.ws, env: { ...env, ...otel("http/json") } });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("compacted");
    const spans = receiver!.spans();
    const turn = one(spans, "invoke_agent tracer");
    const chats = named(spans, `chat ${MODEL}`);
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat.parentSpanId).toBe(turn.spanId);
    const summary = chats.find((c) => c.attributes["gen_ai.usage.output_tokens"] === 30)!;
    expect(summary.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 9040,
      "gen_ai.usage.cache_read.input_tokens": 9000,
    });

    // pod compact: one summary call, its own trace.
    const before = receiver!.spans().length;
    const compacted = await runPod(["compact"], { cwd: box.ws, env: { ...env, ...otel("http/protobuf") } });
    expect(compacted.code, compacted.stderr).toBe(0);
    const own = receiver!.spans().slice(before);
    expect(own.map((s) => s.name)).toEqual([`chat ${MODEL}`]);
    expect(own[0]!.parentSpanId).toBe("");
  });
});
