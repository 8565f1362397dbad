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

/** Reasoning in a fake answer: Anthropic thinking (with its signature) or redacted thinking, an OpenAI reasoning item. */
export interface FakeReasoning {
  text?: string;
  /** Anthropic's thinking signature. */
  signature?: string;
  /** Anthropic redacted thinking: this data instead of text. */
  redacted?: string;
  /** OpenAI's reasoning item id and encrypted content. */
  id?: string;
  encrypted?: string;
}

/** A model answer: reasoning, text and tool calls, in that order. */
export interface FakeAnswer {
  reasoning?: FakeReasoning;
  text?: string;
  /** The text in these pieces, one delta each, instead of two halves. */
  pieces?: readonly string[];
  toolCalls?: readonly { id: string; name: string; input: unknown }[];
  usage?: FakeUsage;
  /** A streamed answer pauses after its first text piece until this settles (a provider that pauses mid-answer). */
  hold?: Promise<unknown>;
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
 * Starts a local HTTP server that speaks Anthropic Messages, OpenAI Chat Completions and the
 * OpenAI Responses API, each streamed (server-sent events) and not, answers from
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
      res.flushHeaders();
      const events =
        wire === "anthropic"
          ? anthropicEvents(answer)
          : wire === "openai-chat"
            ? chatEvents(answer)
            : responsesEvents(answer);
      for (const event of events) {
        if (event === HOLD) {
          await reply.hold?.catch(() => undefined);
          continue;
        }
        res.write(event);
      }
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
  const r = answer.reasoning;
  if (r?.redacted !== undefined) content.push({ type: "redacted_thinking", data: r.redacted });
  else if (r !== undefined) content.push({ type: "thinking", thinking: r.text ?? "", signature: r.signature ?? "" });
  if (textOf(answer) !== "") content.push({ type: "text", text: textOf(answer) });
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

/** Where a streamed answer waits for its `hold`: after the first text piece. */
const HOLD = "\u0000hold";

/** The text's pieces, with the hold marker after the first one when the answer has a hold. */
function textPieces(answer: Answer, piece: (text: string) => string): string[] {
  const pieces = answer.pieces ?? (answer.text === undefined || answer.text === "" ? [] : halves(answer.text));
  const out: string[] = [];
  for (const [i, text] of pieces.entries()) {
    out.push(piece(text));
    if (i === 0 && answer.hold !== undefined) out.push(HOLD);
  }
  return out;
}

const textOf = (answer: Answer): string => answer.pieces?.join("") ?? answer.text ?? "";

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
  const r = answer.reasoning;
  if (r?.redacted !== undefined) {
    events.push(
      sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "redacted_thinking", data: r.redacted },
      }),
      sse("content_block_stop", { type: "content_block_stop", index }),
    );
    index += 1;
  } else if (r !== undefined) {
    events.push(
      sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "" },
      }),
    );
    for (const piece of halves(r.text ?? "")) {
      events.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: piece },
        }),
      );
    }
    if (r.signature !== undefined) {
      events.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: r.signature },
        }),
      );
    }
    events.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index += 1;
  }
  if (textOf(answer) !== "") {
    events.push(
      sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }),
    );
    const at = index;
    events.push(
      ...textPieces(answer, (piece) =>
        sse("content_block_delta", {
          type: "content_block_delta",
          index: at,
          delta: { type: "text_delta", text: piece },
        }),
      ),
    );
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
          content: answer.text ?? answer.pieces?.join("") ?? null,
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
  events.push(...textPieces(answer, (piece) => chunk({ content: piece })));
  for (const [index, call] of chatToolCalls(answer).entries()) events.push(chunk({ tool_calls: [{ index, ...call }] }));
  events.push(chunk({}, (answer.toolCalls ?? []).length > 0 ? "tool_calls" : "stop"));
  events.push(sse(undefined, { ...head, choices: [], usage: chatUsage(answer) }));
  events.push(sse(undefined, "[DONE]"));
  return events;
}

function responsesReasoningItem(answer: Answer) {
  const r = answer.reasoning!;
  return {
    type: "reasoning",
    id: r.id ?? `rs_${answer.n}`,
    encrypted_content: r.encrypted ?? null,
    summary: r.text === undefined ? [] : [{ type: "summary_text", text: r.text }],
  };
}

function responsesMessageItem(answer: Answer) {
  return {
    type: "message",
    id: `msg_${answer.n}`,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: textOf(answer), annotations: [] }],
  };
}

function responsesUsage(answer: Answer) {
  const u = usageOf(answer);
  const input = u.input + u.cacheRead + u.cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + u.output,
  };
}

/** The Responses API's server-sent events for an answer: reasoning item, message item, function calls. */
function responsesEvents(answer: Answer): string[] {
  const events: string[] = [];
  const send = (data: { type: string } & Record<string, unknown>) => events.push(sse(data.type, data));
  send({
    type: "response.created",
    response: { id: `resp_${answer.n}`, created_at: 1_700_000_000, model: answer.model },
  });
  let outputIndex = 0;
  if (answer.reasoning !== undefined) {
    const item = responsesReasoningItem(answer);
    send({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { type: "reasoning", id: item.id, encrypted_content: item.encrypted_content },
    });
    if (answer.reasoning.text !== undefined) {
      send({ type: "response.reasoning_summary_part.added", item_id: item.id, summary_index: 0 });
      for (const piece of halves(answer.reasoning.text)) {
        send({ type: "response.reasoning_summary_text.delta", item_id: item.id, summary_index: 0, delta: piece });
      }
      send({ type: "response.reasoning_summary_part.done", item_id: item.id, summary_index: 0 });
    }
    send({ type: "response.output_item.done", output_index: outputIndex, item });
    outputIndex += 1;
  }
  if (textOf(answer) !== "") {
    const item = responsesMessageItem(answer);
    send({ type: "response.output_item.added", output_index: outputIndex, item: { type: "message", id: item.id } });
    events.push(
      ...textPieces(answer, (delta) =>
        sse("response.output_text.delta", { type: "response.output_text.delta", item_id: item.id, delta }),
      ),
    );
    send({ type: "response.output_item.done", output_index: outputIndex, item });
    outputIndex += 1;
  }
  for (const call of answer.toolCalls ?? []) {
    const item = {
      type: "function_call",
      id: `fc_${call.id}`,
      call_id: call.id,
      name: call.name,
      arguments: JSON.stringify(call.input),
      status: "completed",
    };
    send({ type: "response.output_item.added", output_index: outputIndex, item: { ...item, arguments: "" } });
    send({
      type: "response.function_call_arguments.delta",
      item_id: item.id,
      output_index: outputIndex,
      delta: item.arguments,
    });
    send({ type: "response.output_item.done", output_index: outputIndex, item });
    outputIndex += 1;
  }
  send({
    type: "response.completed",
    response: { incomplete_details: null, usage: responsesUsage(answer) },
  });
  return events;
}

function responsesAnswer(answer: Answer) {
  const u = usageOf(answer);
  const output: unknown[] = [];
  if (answer.reasoning !== undefined) output.push(responsesReasoningItem(answer));
  if (textOf(answer) !== "") output.push(responsesMessageItem(answer));
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
