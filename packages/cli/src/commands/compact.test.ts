import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider, FakeReply, RecordedRequest } from "@insomnia/ai-sdk/testing";
import { afterEach, describe, expect, test } from "vitest";
import { runPod, runPodInProcess, useSandbox, fakeProviderEnv } from "../__fixtures__/sandbox.ts";
import type { PodRun } from "../__fixtures__/sandbox.ts";

// Automatic compaction through the built `pod` against the fake provider: scripted usage figures
// make the threshold reachable in a few turns (provider.context_window 10,000 tokens).

const { box } = useSandbox();
const INSTRUCTION = 'You are the test pod. Tools: {{join tools ", "}}\n';
const COMPACT_TEXT = await readFile(
  join(import.meta.dirname, "..", "..", "..", "..", "resources", "prompts", "compact.md"),
  "utf8",
);

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Json = Record<string, unknown>;
const body = (r: RecordedRequest | undefined): Json => r?.json as Json;

async function serve(script: (r: RecordedRequest, i: number) => FakeReply): Promise<FakeProvider> {
  fake = await startFakeProvider(script);
  return fake;
}

/** A workspace whose manifest points at the fake provider, with the compaction keys given. */
async function workspace(
  server: FakeProvider,
  keys: { compactAt?: number; window?: number | null; model?: string; kind?: string } = {},
): Promise<Record<string, string>> {
  await box.write(".insomnia/prompts/instruction.md", INSTRUCTION);
  await box.write("notes.txt", "the notes file\n".repeat(20));
  const window = keys.window === undefined ? 10_000 : keys.window;
  await box.write(
    ".insomnia/pod.yaml",
    [
      "worker:",
      '  instruction: "$workspace/instruction"',
      ...(keys.compactAt === undefined ? [] : [`  compact_at: ${keys.compactAt}`]),
      "provider:",
      `  kind: ${keys.kind ?? "anthropic"}`,
      `  model: ${keys.model ?? "claude-sonnet-4-5"}`,
      `  base_url: ${server.baseURL}`,
      ...(window === null ? [] : [`  context_window: ${window}`]),
      "",
    ].join("\n"),
  );
  return fakeProviderEnv(box);
}

const pod = (env: Record<string, string>, ...args: string[]): Promise<PodRun> =>
  runPodInProcess(args, { cwd: box.ws, env });

/** The messages of an Anthropic request without its cache breakpoints (the second one moves to the last message). */
function messagesOf(r: RecordedRequest | undefined): unknown[] {
  return JSON.parse(JSON.stringify(body(r).messages ?? []), (key, value) =>
    key === "cache_control" ? undefined : value,
  ) as unknown[];
}

/** The text parts of a request's messages, in order (Anthropic joins consecutive user messages into one). */
const textsOf = (r: RecordedRequest | undefined): string[] =>
  messagesOf(r).flatMap((message) =>
    ((message as { content: { type: string; text?: string }[] }).content ?? []).flatMap((part) =>
      part.type === "text" ? [part.text ?? ""] : [],
    ),
  );

/** Each conversation `pod log --list --json` shows: user messages, the first one, segments. */
async function listed(env: Record<string, string>): Promise<[number, string | undefined, number][]> {
  const list = JSON.parse((await pod(env, "log", "--list", "--json")).stdout) as {
    conversations: { userMessages: number; firstMessage?: string; segments: string[] }[];
  };
  return list.conversations.map((c) => [c.userMessages, c.firstMessage, c.segments.length]);
}

/** True for a compaction request: its last text is the instruction. */
const isCompaction = (r: RecordedRequest): boolean => textsOf(r).at(-1) === COMPACT_TEXT;

const tooLong = (): FakeReply => ({
  status: 400,
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    type: "error",
    error: { type: "invalid_request_error", message: "prompt is too long: 208310 tokens > 200000 maximum" },
  }),
});

describe("automatic compaction through pod run", () => {
  test("the_compaction_request_starts_with_the_previous_request_and_ends_with_the_instruction_and_the_next_starts_with_the_same_prompt_and_tools", async () => {
    const server = await serve((r, i) => {
      if (isCompaction(r))
        return { text: "SUMMARY: the user said one.", usage: { cacheRead: 9000, input: 40, output: 30 } };
      return { text: `a${i}`, usage: { input: i === 0 ? 9000 : 200, output: 10 } };
    });
    const env = await workspace(server);
    expect((await pod(env, "run", "one")).code).toBe(0);
    const second = await pod(env, "run", "two");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /compacted \(the last call reached worker\.compact_at of the context window\): segment \S+ continues in \S+; summary call: /,
    );
    const [first, compaction, next] = server.requests;
    expect(server.requests).toHaveLength(3);
    expect(isCompaction(compaction!)).toBe(true);
    // Same system prompt and tools, byte for byte (their cache breakpoints included).
    expect(JSON.stringify(body(compaction).system)).toBe(JSON.stringify(body(first).system));
    expect(JSON.stringify(body(compaction).tools)).toBe(JSON.stringify(body(first).tools));
    // The previous request's messages, then the answer, then the instruction: nothing else.
    const before = messagesOf(first);
    expect(messagesOf(compaction).slice(0, before.length)).toEqual(before);
    expect(textsOf(compaction)).toEqual(["one", "a0", COMPACT_TEXT]);
    // The next request: the same prompt and tools, the summary, then the user's message.
    expect(JSON.stringify(body(next).system)).toBe(JSON.stringify(body(first).system));
    expect(JSON.stringify(body(next).tools)).toBe(JSON.stringify(body(first).tools));
    expect(textsOf(next)).toEqual(["Summary of the conversation so far:\nSUMMARY: the user said one.", "two"]);

    // A new process restores the compacted segment: same prompt and tools, the summary, the turn.
    const third = await runPod(["run", "three"], { cwd: box.ws, env });
    expect(third.code, third.stderr).toBe(0);
    const restored = server.requests[3];
    expect(JSON.stringify(body(restored).system)).toBe(JSON.stringify(body(first).system));
    expect(JSON.stringify(body(restored).tools)).toBe(JSON.stringify(body(first).tools));
    expect(textsOf(restored)).toEqual([
      "Summary of the conversation so far:\nSUMMARY: the user said one.",
      "two",
      "a2",
      "three",
    ]);

    // pod log --list counts what the user typed once: the turn message kept across the
    // compaction is a copy, and the summary is not the user's.
    expect(await listed(env)).toEqual([[3, "one", 2]]);

    // pod log shows the compaction with its usage, and counts the summary call in the total.
    const log = await pod(env, "log");
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toMatch(
      /compaction \(the last call reached worker\.compact_at of the context window\): applied, continues in segment/,
    );
    expect(log.stdout).toMatch(/summary call usage: 1 model call, 9,040 input tokens \(9,000 cache read, 100%/);
    expect(log.stdout).toContain("answered after the compaction, in segment");
    const json = JSON.parse((await pod(env, "log", "--json")).stdout) as {
      segments: { compactions: { outcome: string; reason: string; call?: { usage?: Json } }[] }[];
      usage: { calls: number };
    };
    expect(json.segments[0]!.compactions).toMatchObject([
      { outcome: "applied", reason: "threshold", call: { usage: { cacheReadTokens: 9000 } } },
    ]);
    expect(json.usage.calls).toBe(4); // the three turns' calls and the summary call
  });

  test.each([
    [0.5, 4999, 5000],
    [0.95, 9499, 9500],
  ])("compact_at_%s_is_honoured_exactly_as_written", async (at, below, reached) => {
    const usages = [below, reached, 100];
    let turn = 0;
    const server = await serve((r) => {
      if (isCompaction(r)) return { text: "short summary", usage: { input: 10, output: 5 } };
      const input = usages[turn++] ?? 100;
      return { text: `answer ${turn}`, usage: { input: input - 1, output: 1 } };
    });
    const env = await workspace(server, { compactAt: at });
    for (const word of ["one", "two", "three"]) expect((await pod(env, "run", word)).code).toBe(0);
    // Below the threshold: no compaction before "two"; at it: one before "three".
    expect(server.requests.map(isCompaction)).toEqual([false, false, true, false]);
  });

  test("a_summary_too_long_to_help_is_not_applied_and_no_second_compaction_follows_in_the_same_call", async () => {
    const server = await serve((r) => {
      if (isCompaction(r)) return { text: "x".repeat(40_000), usage: { input: 100, output: 10_000 } };
      return { text: "answer", usage: { input: 9000, output: 10 } };
    });
    const env = await workspace(server);
    expect((await pod(env, "run", "one")).code).toBe(0);
    const second = await pod(env, "run", "two");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("COMPACTION_INEFFECTIVE");
    // One compaction attempt, then the turn's own call with the history unchanged: no loop.
    expect(server.requests.map(isCompaction)).toEqual([false, true, false]);
    expect(textsOf(server.requests[2])).toEqual(["one", "answer", "two"]);
    // The summary call is in the log and in the totals even though it was not applied.
    const json = JSON.parse((await pod(env, "log", "--json")).stdout) as {
      segments: { compactions: { outcome: string }[] }[];
      usage: { calls: number; outputTokens: number };
    };
    expect(json.segments).toHaveLength(1);
    expect(json.segments[0]!.compactions).toMatchObject([{ outcome: "ineffective" }]);
    expect(json.usage).toMatchObject({ calls: 3, outputTokens: 10_020 });
  });

  test("a_tool_call_instead_of_a_summary_is_not_applied_and_not_looped", async () => {
    const server = await serve((r) => {
      if (isCompaction(r)) {
        return { toolCalls: [{ id: "t1", name: "read_file", input: { path: "notes.txt" } }], usage: { input: 5 } };
      }
      return { text: "answer", usage: { input: 9000, output: 10 } };
    });
    const env = await workspace(server);
    expect((await pod(env, "run", "one")).code).toBe(0);
    const second = await pod(env, "run", "two");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("COMPACTION_FAILED");
    expect(second.stderr).toContain("the model called a tool instead of writing the summary");
    expect(server.requests.map(isCompaction)).toEqual([false, true, false]);
  });

  test("context_overflow_triggers_one_compaction_and_one_retry", async () => {
    const server = await serve((r, i) => {
      if (isCompaction(r)) return { text: "overflow summary", usage: { input: 50, output: 5 } };
      if (i === 1) return tooLong();
      return { text: `a${i}`, usage: { input: 100, output: 5 } };
    });
    const env = await workspace(server, { window: 1_000_000 });
    expect((await pod(env, "run", "one")).code).toBe(0);
    const second = await pod(env, "run", "two");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain("the provider said the prompt is too long");
    expect(server.requests.map(isCompaction)).toEqual([false, false, true, false]);
    expect(textsOf(server.requests[2])).toEqual(["one", "a0", COMPACT_TEXT]);
    expect(textsOf(server.requests[3])).toEqual(["Summary of the conversation so far:\noverflow summary", "two"]);
  });

  test("a_retry_that_overflows_again_is_a_coded_error_and_nothing_more_is_sent_or_lost", async () => {
    const server = await serve((r, i) => {
      if (isCompaction(r)) return { text: "overflow summary", usage: { input: 50, output: 5 } };
      return i === 0 ? { text: "a0", usage: { input: 100 } } : tooLong();
    });
    const env = await workspace(server, { window: null, model: "claude-not-in-the-table" });
    expect((await pod(env, "run", "one")).code).toBe(0);
    const second = await pod(env, "run", "two");
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("CONTEXT_OVERFLOW");
    expect(server.requests.map(isCompaction)).toEqual([false, false, true, false]);
    // The user's message is kept (in the new segment), so pod resume can go on.
    const log = await pod(env, "log");
    expect(log.stdout).toContain("> two");
    // A model with no known window: pod check says so.
    const check = await pod(env, "check");
    expect(check.stderr).toContain("CONTEXT_WINDOW_UNKNOWN");
  });

  test("a_compaction_request_that_overflows_is_sent_once_more_with_old_tool_outputs_left_out_then_fails_coded", async () => {
    let compactions = 0;
    const server = await serve((r, i) => {
      if (isCompaction(r)) {
        compactions += 1;
        return compactions === 1 || compactions >= 3 ? tooLong() : { text: "light summary", usage: { input: 20 } };
      }
      if (i === 0)
        return { toolCalls: [{ id: "c1", name: "read_file", input: { path: "notes.txt" } }], usage: { input: 10 } };
      if (i === 1) return { text: "read it", usage: { input: 20 } };
      if (i === 2 || textsOf(r).includes("three")) return tooLong();
      return { text: `a${i}`, usage: { input: 30 } };
    });
    const env = await workspace(server, { window: 1_000_000 });
    expect((await pod(env, "run", "read the notes")).code).toBe(0);
    const second = await pod(env, "run", "two");
    expect(second.code, second.stderr).toBe(0);
    const [full, light] = server.requests.filter(isCompaction);
    expect(JSON.stringify(messagesOf(full))).toContain("the notes file");
    expect(JSON.stringify(messagesOf(light))).not.toContain("the notes file");
    expect(JSON.stringify(messagesOf(light))).toContain(
      "[output of read_file left out of the compaction request to fit the context window:",
    );
    const log = JSON.parse((await pod(env, "log", "--json")).stdout) as {
      segments: { compactions: { toolOutputsLeftOut?: boolean }[]; messages: { content: string }[] }[];
    };
    expect(log.segments[0]!.compactions).toMatchObject([{ toolOutputsLeftOut: true }]);
    // The log keeps the tool output as it was.
    expect(JSON.stringify(log.segments[0]!.messages)).toContain("the notes file");

    // Both compaction requests overflow: a coded error, and nothing lost.
    const third = await runPod(["run", "three"], { cwd: box.ws, env });
    expect(third.code).toBe(1);
    expect(third.stderr).toContain("CONTEXT_OVERFLOW");
    expect((await pod(env, "log")).stdout).toContain("> three");
  });

  test("a_compaction_mid_tool_loop_keeps_the_call_with_its_result_and_the_users_message", async () => {
    const server = await serve((r, i) => {
      if (isCompaction(r)) return { text: "mid-loop summary", usage: { input: 10 } };
      if (i === 0) return { text: "hello", usage: { input: 100 } };
      if (i === 1) {
        return { toolCalls: [{ id: "c1", name: "read_file", input: { path: "notes.txt" } }], usage: { input: 9000 } };
      }
      return { text: "done", usage: { input: 100 } };
    });
    const env = await workspace(server);
    expect((await pod(env, "run", "one")).code).toBe(0);
    const second = await pod(env, "run", "read the notes");
    expect(second.code, second.stderr).toBe(0);
    expect(server.requests.map(isCompaction)).toEqual([false, false, true, false]);
    expect(textsOf(server.requests[2]).at(-1)).toBe(COMPACT_TEXT);
    const after = messagesOf(server.requests[3]) as { role: string; content: { type: string }[] }[];
    // The summary and the user's message (one Anthropic user message), the call, its result.
    expect(after.map((m) => [m.role, m.content.map((p) => p.type).join(",")])).toEqual([
      ["user", "text,text"],
      ["assistant", "tool_use"],
      ["user", "tool_result"],
    ]);
    expect(textsOf(server.requests[3]).slice(0, 2)).toEqual([
      "Summary of the conversation so far:\nmid-loop summary",
      "read the notes",
    ]);
    expect(JSON.stringify(after[2])).toContain("the notes file");
    expect(await listed(env)).toEqual([[2, "one", 2]]);
  });
});

describe("pod compact", () => {
  test("compacts_the_latest_conversation_now_and_the_next_run_starts_from_the_summary", async () => {
    const server = await serve((r, i) => {
      if (isCompaction(r)) return { text: "manual summary", usage: { cacheRead: 300, input: 10, output: 20 } };
      return { text: `a${i}`, usage: { input: 300, output: 5 } };
    });
    const env = await workspace(server, { window: null, model: "claude-not-in-the-table" });
    const none = await pod(env, "compact");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("NO_CONVERSATION");
    expect((await pod(env, "run", "one")).code).toBe(0);
    const compact = await pod(env, "compact", "--json");
    expect(compact.code, compact.stderr).toBe(0);
    const report = JSON.parse(compact.stdout) as Json;
    expect(report).toMatchObject({ reason: "manual", outcome: "applied", usage: { calls: 1, cacheReadTokens: 300 } });
    expect(report.segmentId).not.toBe(report.previousSegment);
    expect(textsOf(server.requests[1])).toEqual(["one", "a0", COMPACT_TEXT]);
    expect((await pod(env, "run", "two")).code).toBe(0);
    expect(textsOf(server.requests[2])).toEqual(["Summary of the conversation so far:\nmanual summary", "two"]);
    const log = await pod(env, "log");
    expect(log.stdout).toContain("compaction (pod compact): applied, continues in segment");
    const text = await pod(env, "compact");
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^compacted \(asked for\): segment \S+ continues in \S+; summary call: /);
    // Compacted between turns, twice: nothing was kept, nothing counted twice.
    expect(await listed(env)).toEqual([[2, "one", 3]]);
  });
});

describe("bad compaction settings", () => {
  test("compact_at_outside_its_range_stops_pod_run_at_its_position_with_nothing_sent", async () => {
    const server = await serve(() => ({ text: "never" }));
    for (const value of ["0.49", "0.96", "1", "-0.8", '"0.8"']) {
      const env = await workspace(server);
      await box.write(
        ".insomnia/pod.yaml",
        `worker:\n  compact_at: ${value}\nprovider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: ${server.baseURL}\n`,
      );
      const run = await pod(env, "run", "hi");
      expect(run.code, value).toBe(1);
      expect(run.stderr, value).toContain(
        ".insomnia/pod.yaml:2:15: INVALID_VALUE: worker.compact_at must be a fraction",
      );
      expect(run.stderr, value).toContain("never clamped");
    }
    expect(server.requests).toHaveLength(0);
  });

  test("a_context_window_that_is_not_a_positive_whole_number_and_an_unreadable_compact_instruction", async () => {
    const server = await serve(() => ({ text: "never" }));
    const env = await workspace(server);
    await box.write(
      ".insomnia/pod.yaml",
      `provider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: ${server.baseURL}\n  context_window: 0\n`,
    );
    const bad = await pod(env, "check");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      ".insomnia/pod.yaml:5:19: INVALID_VALUE: provider.context_window must be a positive whole number of tokens",
    );
    await box.write(
      ".insomnia/pod.yaml",
      `worker:\n  compact_instruction: "$workspace/nope"\nprovider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: ${server.baseURL}\n`,
    );
    const check = await pod(env, "check");
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      ".insomnia/pod.yaml:2:24: INVALID_COMPACT_INSTRUCTION: [NOT_FOUND] worker.compact_instruction $workspace/nope cannot be read",
    );
    const run = await pod(env, "run", "hi");
    expect(run.code).toBe(1);
    // pod run reports it as pod check does: at the manifest value, with the loader's code.
    expect(run.stderr).toContain(
      ".insomnia/pod.yaml:2:24: INVALID_COMPACT_INSTRUCTION: [NOT_FOUND] worker.compact_instruction $workspace/nope cannot be read",
    );
    expect(server.requests).toHaveLength(0);
  });
});
