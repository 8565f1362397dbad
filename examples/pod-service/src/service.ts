import { mkdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { type AiSdkLanguageModel, aiSdkClient } from "@insomnia/ai-sdk";
import { loadManifest } from "@insomnia/manifest";
import { Pod } from "@insomnia/pod";
import { PromptLoader } from "@insomnia/prompt-loader";
import { PostgresSegmentStore } from "@insomnia/segment-store-postgres";
import { type Message, Worker } from "@insomnia/worker";
import type pg from "pg";
import { httpFailure } from "./http-errors.ts";

/** What the service needs: where pods live, their model, and the shared database pool. */
export interface PodServiceOptions {
  /** One pg pool for every pod's store (a pool per pod would exhaust the server's connections). */
  pool: pg.Pool;
  /** The model every pod talks to. */
  model: AiSdkLanguageModel;
  /** The service's manifest file (its only layer): instruction, limits, tools. */
  manifestFile: string;
  /** The application's prompt folder, the `$app` root its manifest's instruction names. */
  promptsDir: string;
  /** A directory per pod is made below this one (its `pod.pwd`). */
  dataDir: string;
  /** Retries of a failed model call before the request fails (the AI SDK's; default 2). */
  maxRetries?: number;
}

/** A pod id as it appears in a URL: letters, digits, `-` and `_`, 1-64 of them. */
const POD_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The example service: `POST /pods/:id/messages` with `{ "message": "..." }` sends one turn to
 * pod `id` (created on first use, restored from PostgreSQL afterwards) and answers
 * `{ answer, usage }`; `GET /pods/:id/messages` answers the conversation so far.
 */
export function createPodService(options: PodServiceOptions): Server {
  // One turn at a time per pod in this process; another process gets SEGMENT_LOCKED (409).
  const queues = new Map<string, Promise<unknown>>();
  const serialized = <T>(id: string, task: () => Promise<T>): Promise<T> => {
    const previous = queues.get(id) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.catch(() => undefined);
    queues.set(id, settled);
    void settled.then(() => {
      if (queues.get(id) === settled) queues.delete(id);
    });
    return next;
  };

  return createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const failure = httpFailure(error);
      send(response, failure.status, failure.body, failure.headers);
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/pods\/([^/]+)\/messages$/.exec(new URL(request.url ?? "/", "http://x").pathname);
    if (match === null) return send(response, 404, { error: { code: "NOT_FOUND", message: "no such route" } });
    const id = decodeURIComponent(match[1]!);
    if (!POD_ID.test(id)) {
      return send(response, 400, { error: { code: "BAD_POD_ID", message: "a pod id is 1-64 of A-Z a-z 0-9 _ -" } });
    }
    if (request.method === "GET") return send(response, 200, { messages: await history(id) });
    if (request.method !== "POST") {
      return send(response, 405, { error: { code: "METHOD", message: "use GET or POST" } }, { allow: "GET, POST" });
    }
    const message = await readMessage(request);
    if (message === undefined) {
      return send(response, 400, { error: { code: "BAD_BODY", message: 'send {"message": "<non-empty text>"}' } });
    }
    const result = await serialized(id, () => turn(id, message));
    send(response, 200, result);
  }

  /** Opens pod `id` (restored when its log has a segment), runs `work` on it and closes it. */
  async function withPod<T>(id: string, work: (pod: Pod, worker: Worker) => Promise<T>): Promise<T> {
    const cwd = join(options.dataDir, id);
    await mkdir(cwd, { recursive: true });
    const { manifest } = await loadManifest({ cwd, manifestFile: options.manifestFile, userLayer: false, env: {} });
    const loader = PromptLoader.forPod({ cwd, env: {}, appDir: options.promptsDir });
    const client = aiSdkClient(options.model, {
      maxOutputTokens: manifest.worker.max_tokens,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    });
    const worker = new Worker({ client, maxIterations: manifest.worker.max_turns });
    const store = await PostgresSegmentStore.open({ pool: options.pool, podId: id });
    let pod: Pod | undefined;
    try {
      // Restore-or-start is decided under the pod's writer lock, held until close: another
      // service process handling the same pod gets SEGMENT_LOCKED instead of forking it.
      pod = await Pod.open(manifest, { worker, store, loader, env: {} });
      return await work(pod, worker);
    } finally {
      await pod?.close();
      await store.close();
    }
  }

  // Streaming is a small follow-up: when pod.run takes { onEvent }, write each text-delta
  // event as a server-sent event here instead of answering once at the end.
  async function turn(id: string, message: string) {
    return withPod(id, async (pod) => {
      const result = await pod.run(message);
      return { answer: result.final, usage: usageOf(result.messages) };
    });
  }

  async function history(id: string): Promise<Message[]> {
    const store = await PostgresSegmentStore.open({ pool: options.pool, podId: id });
    try {
      const latest = await store.latestSegment();
      if (latest === undefined) return [];
      const { records } = await store.readSegment(latest);
      return records.flatMap((r) => (r.type === "message" ? [r.message as Message] : []));
    } finally {
      await store.close();
    }
  }
}

function usageOf(messages: readonly Message[]): { modelCalls: number; inputTokens: number; outputTokens: number } {
  let modelCalls = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    modelCalls += 1;
    inputTokens += message.usage?.inputTokens ?? 0;
    outputTokens += message.usage?.outputTokens ?? 0;
  }
  return { modelCalls, inputTokens, outputTokens };
}

async function readMessage(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { message?: unknown };
    return typeof body.message === "string" && body.message.trim() !== "" ? body.message : undefined;
  } catch {
    return undefined;
  }
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(`${JSON.stringify(body)}\n`);
}
