import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** Which wire format a request used, from its path. */
export type FakeWire = "anthropic" | "openai-chat" | "openai-responses";

/** One request the fake provider received, byte for byte. */
export interface RecordedRequest {
  readonly wire: FakeWire;
  readonly method: string;
  readonly path: string;
  /** Header names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body exactly as it arrived (UTF-8). */
  readonly body: string;
  /** The body parsed as JSON (`undefined` when it is not JSON). */
  readonly json: unknown;
  /** True when the request asked for a streamed answer. */
  readonly stream: boolean;
}

/** Token counts the fake provider reports, in our terms; each provider's wire names are derived from them. */
export interface FakeUsage {
  /** Input tokens not read from or written to the cache. */
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** A model answer: text and tool calls, in that order. */
export interface FakeAnswer {
  text?: string;
  toolCalls?: readonly { id: string; name: string; input: unknown }[];
  usage?: FakeUsage;
}

/** A raw HTTP answer (an error status, a malformed body). */
export interface FakeRaw {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** What the fake answers a request with: a model answer, a raw HTTP answer, or a dropped connection. */
export type FakeReply = FakeAnswer | FakeRaw | { reset: true } | { hang: true };

/** Chooses the reply to the `index`-th request (0-based, counting every request). */
export type FakeScript = (request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>;

/** A running fake provider. */
export interface FakeProvider {
  /** `http://127.0.0.1:<port>/v1`: the base URL for Anthropic and OpenAI providers. */
  readonly baseURL: string;
  /** Every request received, oldest first. */
  readonly requests: readonly RecordedRequest[];
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

const WIRES: Record<string, FakeWire> = {
  "/v1/messages": "anthropic",
  "/v1/chat/completions": "openai-chat",
  "/v1/responses": "openai-responses",
};

/**
 * Starts a local HTTP server that speaks Anthropic Messages (streamed and not), OpenAI Chat
 * Completions (streamed and not) and the OpenAI Responses API (not streamed), answers from
 * `script` and records every request. For tests and benchmarks: nothing leaves the machine.
 */
export async function startFakeProvider(script: FakeScript): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake provider: ${String(error)}` } }));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "").split("?")[0] ?? "";
    const wire = WIRES[path];
    if (wire === undefined || req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake provider: no route ${req.method} ${path}` } }));
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const stream = (json as { stream?: unknown } | undefined)?.stream === true;
    const recorded: RecordedRequest = { wire, method: req.method, path, headers, body, json, stream };
    const index = requests.length;
    requests.push(recorded);
    const reply = await script(recorded, index);
    if ("reset" in reply) {
      req.socket.destroy();
      return;
    }
    if ("hang" in reply) return;
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(reply.body ?? "");
      return;
    }
    const model = (json as { model?: unknown } | undefined)?.model;
    const answer = { ...reply, model: typeof model === "string" ? model : "fake-model", n: index + 1 };
    if (stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const events = wire === "anthropic" ? anthropicEvents(answer) : wire === "openai-chat" ? chatEvents(answer) : [];
      for (const event of events) res.write(event);
      res.end();
      return;
    }
    const payload =
      wire === "anthropic"
        ? anthropicMessage(answer)
        : wire === "openai-chat"
          ? chatCompletion(answer)
          : responsesAnswer(answer);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(payload));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

type Answer = FakeAnswer & { model: string; n: number };

const usageOf = (answer: Answer) => {
  const u = answer.usage ?? {};
  return { input: u.input ?? 10, output: u.output ?? 5, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0 };
};

function anthropicUsage(answer: Answer) {
  const u = usageOf(answer);
  return {
    input_tokens: u.input,
    output_tokens: u.output,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
  };
}

function anthropicMessage(answer: Answer) {
  const content: unknown[] = [];
  if (answer.text !== undefined && answer.text !== "") content.push({ type: "text", text: answer.text });
  for (const call of answer.toolCalls ?? [])
    content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input });
  return {
    id: `msg_${answer.n}`,
    type: "message",
    role: "assistant",
    model: answer.model,
    content,
    stop_reason: (answer.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: anthropicUsage(answer),
  };
}

const sse = (event: string | undefined, data: unknown): string =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;

function halves(text: string): string[] {
  const middle = Math.ceil(text.length / 2);
  return text.length < 2 ? [text] : [text.slice(0, middle), text.slice(middle)];
}

function anthropicEvents(answer: Answer): string[] {
  const usage = anthropicUsage(answer);
  const events = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: `msg_${answer.n}`,
        type: "message",
        role: "assistant",
        model: answer.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (answer.text !== undefined && answer.text !== "") {
    events.push(
      sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }),
    );
    for (const piece of halves(answer.text)) {
      events.push(
        sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }),
      );
    }
    events.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index += 1;
  }
  for (const call of answer.toolCalls ?? []) {
    events.push(
      sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      }),
    );
    for (const piece of halves(JSON.stringify(call.input))) {
      events.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        }),
      );
    }
    events.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index += 1;
  }
  events.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: (answer.toolCalls ?? []).length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    sse("message_stop", { type: "message_stop" }),
  );
  return events;
}

function chatUsage(answer: Answer) {
  const u = usageOf(answer);
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
  };
}

function chatToolCalls(answer: Answer) {
  return (answer.toolCalls ?? []).map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
}

function chatCompletion(answer: Answer) {
  const calls = chatToolCalls(answer);
  return {
    id: `chatcmpl-${answer.n}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: answer.text ?? null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: chatUsage(answer),
  };
}

function chatEvents(answer: Answer): string[] {
  const head = {
    id: `chatcmpl-${answer.n}`,
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: answer.model,
  };
  const events: string[] = [];
  const chunk = (delta: unknown, finish: string | null = null) =>
    sse(undefined, { ...head, choices: [{ index: 0, delta, finish_reason: finish }] });
  events.push(chunk({ role: "assistant", content: "" }));
  if (answer.text !== undefined) for (const piece of halves(answer.text)) events.push(chunk({ content: piece }));
  for (const [index, call] of chatToolCalls(answer).entries()) events.push(chunk({ tool_calls: [{ index, ...call }] }));
  events.push(chunk({}, (answer.toolCalls ?? []).length > 0 ? "tool_calls" : "stop"));
  events.push(sse(undefined, { ...head, choices: [], usage: chatUsage(answer) }));
  events.push(sse(undefined, "[DONE]"));
  return events;
}

function responsesAnswer(answer: Answer) {
  const u = usageOf(answer);
  const output: unknown[] = [];
  if (answer.text !== undefined && answer.text !== "") {
    output.push({
      type: "message",
      id: `msg_${answer.n}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: answer.text, annotations: [] }],
    });
  }
  for (const call of answer.toolCalls ?? []) {
    output.push({
      type: "function_call",
      id: `fc_${call.id}`,
      call_id: call.id,
      name: call.name,
      arguments: JSON.stringify(call.input),
      status: "completed",
    });
  }
  const input = u.input + u.cacheRead + u.cacheWrite;
  return {
    id: `resp_${answer.n}`,
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    model: answer.model,
    output,
    incomplete_details: null,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: u.cacheRead },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + u.output,
    },
  };
}
