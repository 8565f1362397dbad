import { appendFile, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PromptLoader, promptFileSha256 } from "@insomnia/prompt-loader";
import { ScopeError } from "@insomnia/scope";
import { SystemPromptError } from "@insomnia/template";
import { Worker, WorkerError } from "@insomnia/worker";
import { echoTool, ScriptedLlmClient } from "@insomnia/worker/testing";
import type { LlmClient, LlmResponse } from "@insomnia/worker";
import { afterEach, describe, expect, test } from "vitest";
import { countingClock, makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { previewSystemPrompt } from "./pod-prompt.ts";
import { Pod } from "./pod.ts";
import { PodError } from "./pod-error.ts";
import { collectWarnings } from "./pod-warning.ts";
import { FileSegmentStore, MemorySegmentStore, SegmentStoreError } from "@insomnia/segment-store";
import { summaryMessage } from "./summary-message.ts";

const INSTRUCTION = 'You are a test pod in {{cwd}}.\nIt is {{datetime}}.\nTools: {{join tools ", "}}\n';
const NOW = "2025-01-02T03:04:05.000Z";

const dirs: PodDir[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await dir.cleanup();
});

async function podDir(instruction = INSTRUCTION, agentsMd?: string): Promise<PodDir> {
  const dir = await makePodDir(instruction, agentsMd === undefined ? {} : { agentsMd });
  dirs.push(dir);
  return dir;
}

/** A client that answers every request with "answer <n>". */
function answering(): ScriptedLlmClient {
  return new ScriptedLlmClient((_request, index): LlmResponse => ({ content: `answer ${index + 1}` }));
}

function newWorker(client = answering()): { worker: Worker; client: ScriptedLlmClient } {
  const worker = new Worker({ client });
  worker.tools.register(echoTool("read_file"));
  worker.tools.registerFactory(() => echoTool("write_file"));
  return { worker, client };
}

async function start(dir: PodDir, options: { clock?: ReturnType<typeof countingClock> } = {}) {
  const { worker, client } = newWorker();
  const store = new MemorySegmentStore();
  const clock = options.clock ?? countingClock(NOW);
  const notifier = collectWarnings();
  const pod = await Pod.fromManifest(dir.manifest, { worker, store, clock, notifier, env: dir.env });
  return { pod, worker, client, store, clock, notifier };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("Pod.fromManifest", () => {
  test("template_parse_rejects_invalid_syntax", async () => {
    const dir = await podDir("Hello\n{{#if tools}}never closed\n");
    const { worker } = newWorker();
    const store = new MemorySegmentStore();
    const error = await rejection(Pod.fromManifest(dir.manifest, { worker, store, env: dir.env }));
    expect(PodError.is(error)).toBe(true);
    const podError = error as PodError;
    expect(podError.code).toBe("INVALID_SYSTEM_PROMPT_TEMPLATE");
    expect(SystemPromptError.is(podError.cause)).toBe(true);
    expect((podError.cause as SystemPromptError).phase).toBe("parse");
    expect(podError.ref).toBe("$workspace/main");
    expect(podError.file).toBe(join(dir.pwd, ".insomnia", "prompts", "main.md"));
    expect(podError.line).toBe((podError.cause as SystemPromptError).line);
    expect(podError.message).toContain("$workspace/main:");
    expect(worker.getSystemPrompt()).toBeUndefined();
    expect(await store.listSegments()).toEqual([]);
  });

  test("unknown_variable_inside_a_block_fails_at_creation", async () => {
    const dir = await podDir("{{#if tols}}x{{/if}}\n");
    const error = await rejection(
      Pod.fromManifest(dir.manifest, { ...newWorker(), store: new MemorySegmentStore(), env: dir.env }),
    );
    expect(PodError.is(error) && error.code).toBe("INVALID_SYSTEM_PROMPT_TEMPLATE");
    expect((error as PodError).line).toBe(1);
  });

  test("missing_instruction_file_is_invalid_template", async () => {
    const dir = await podDir();
    const manifest = { ...dir.manifest, worker: { ...dir.manifest.worker, instruction: "$workspace/nope" } };
    const error = await rejection(
      Pod.fromManifest(manifest, { ...newWorker(), store: new MemorySegmentStore(), env: dir.env }),
    );
    expect(PodError.is(error) && error.code).toBe("INVALID_SYSTEM_PROMPT_TEMPLATE");
    expect((error as PodError).message).toContain("$workspace/nope");
  });

  test("invalid_scope_is_a_pod_error_with_the_scope_error_as_cause", async () => {
    const dir = await podDir();
    const manifest = { ...dir.manifest, scope: { allow: [], deny: [] } };
    const error = await rejection(
      Pod.fromManifest(manifest, { ...newWorker(), store: new MemorySegmentStore(), env: dir.env }),
    );
    expect(PodError.is(error) && error.code).toBe("INVALID_SCOPE");
    expect(ScopeError.is((error as PodError).cause)).toBe(true);
  });

  test("workspace_prompts_symlinked_out_of_the_workspace_are_refused_whatever_the_scope", async () => {
    const dir = await podDir();
    // A hostile repository makes .insomnia/prompts point at a private directory elsewhere.
    const privateDir = join(dir.outside, "notes");
    await mkdir(privateDir, { recursive: true });
    await writeFile(join(privateDir, "main.md"), "password: hunter2\n");
    await rm(join(dir.pwd, ".insomnia", "prompts"), { recursive: true });
    await symlink(privateDir, join(dir.pwd, ".insomnia", "prompts"));
    const store = new MemorySegmentStore();
    const error = await rejection(Pod.fromManifest(dir.manifest, { ...newWorker(), store, env: dir.env }));
    expect(PodError.is(error) && error.code).toBe("INVALID_SYSTEM_PROMPT_TEMPLATE");
    expect((error as PodError).file).toBe(join(privateDir, "main.md"));
    expect((error as PodError).ref).toBe("$workspace/main");
    expect((error as PodError).message).toContain("outside the workspace");
    expect(await store.listSegments()).toEqual([]);

    // A scope that allows reading them does not change that: the checkout made the symlink.
    const allowed = {
      ...dir.manifest,
      scope: { allow: [...dir.manifest.scope.allow, { target: dir.outside, permission: "read" as const }], deny: [] },
    };
    const again = await rejection(Pod.fromManifest(allowed, { ...newWorker(), store, env: dir.env }));
    expect(PodError.is(again) && again.code).toBe("INVALID_SYSTEM_PROMPT_TEMPLATE");
  });

  test("template_is_not_materialised_before_first_run", async () => {
    const dir = await podDir();
    const { pod, worker, store, clock, client } = await start(dir);
    expect(pod.isMaterialized).toBe(false);
    expect(pod.segmentId).toBeUndefined();
    expect(worker.getSystemPrompt()).toBeUndefined();
    expect(worker.tools.pendingCount).toBe(1);
    expect(await store.listSegments()).toEqual([]);
    expect(clock.calls).toBe(0);
    expect(client.requests).toEqual([]);
  });
});

describe("first run", () => {
  test("materialise_on_first_turn_populates_worker", async () => {
    const dir = await podDir();
    const { pod, worker, client } = await start(dir);
    const result = await pod.run("hello");
    expect(result.final).toBe("answer 1");
    const expected = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: ["read_file", "write_file"],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(worker.getSystemPrompt()).toBe(expected.prompt);
    expect(
      expected.prompt.startsWith(
        `You are a test pod in ${dir.pwd}.\nIt is 2025-01-02T03:04:05Z.\nTools: read_file, write_file\n`,
      ),
    ).toBe(true);
    expect(client.requests.map((r) => r.systemPrompt)).toEqual([expected.prompt]);
    expect(pod.isMaterialized).toBe(true);
  });

  test("segment_start_captures_rendered_prompt", async () => {
    const dir = await podDir();
    const { pod, worker, store } = await start(dir);
    await pod.run("hello");
    const segmentId = pod.segmentId!;
    expect(await store.listSegments()).toEqual([segmentId]);
    const { records } = await store.readSegment(segmentId);
    const file = join(dir.pwd, ".insomnia", "prompts", "main.md");
    expect(records).toEqual([
      {
        type: "segment_start",
        systemPrompt: worker.getSystemPrompt(),
        sources: [{ ref: "$workspace/main", file, sha256: promptFileSha256(Buffer.from(INSTRUCTION)) }],
        createdAt: NOW,
        tools: worker.tools.names(),
        toolDefinitions: JSON.parse(JSON.stringify(worker.tools.definitions())),
        sections: pod.sections,
      },
      { type: "message", version: 2, message: { role: "user", content: "hello" } },
      { type: "message", version: 2, message: { role: "assistant", content: "answer 1" }, call: expect.any(Object) },
    ]);
  });

  test("render_failure_propagates_as_pod_error", async () => {
    // 40^4 iterations: far over the render step budget, caught at render time.
    const dir = await podDir(
      "{{#each tools}}{{#each tools}}{{#each tools}}{{#each tools}}.{{/each}}{{/each}}{{/each}}{{/each}}\n",
    );
    const { pod, worker, store } = await start(dir);
    for (let i = 0; i < 40; i++) worker.tools.register(echoTool(`tool_${String(i).padStart(2, "0")}`));
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await rejection(pod.run("hello"));
      expect(PodError.is(error) && error.code).toBe("SYSTEM_PROMPT_RENDER");
      expect(SystemPromptError.is((error as PodError).cause)).toBe(true);
      expect(((error as PodError).cause as SystemPromptError).phase).toBe("render");
      expect((error as PodError).ref).toBe("$workspace/main");
    }
    expect(pod.isMaterialized).toBe(false);
    expect(worker.getSystemPrompt()).toBeUndefined();
    expect(worker.getHistory()).toEqual([]);
    expect(await store.listSegments()).toEqual([]);
  });

  test("materialise_runs_only_once_across_turns", async () => {
    const dir = await podDir();
    const { pod, client, store, clock } = await start(dir);
    await pod.run("one");
    await pod.run("two");
    await pod.resume();
    await pod.run("three");
    expect(clock.calls).toBe(1);
    expect(await store.listSegments()).toHaveLength(1);
    const prompts = new Set(client.requests.map((r) => r.systemPrompt));
    expect(client.requests).toHaveLength(3);
    expect(prompts.size).toBe(1);
  });

  test("concurrent_first_runs_render_once_and_write_one_segment_start", async () => {
    const dir = await podDir();
    const { pod, client, store, clock } = await start(dir);
    const [a, b, c] = await Promise.all([pod.run("a"), pod.run("b"), pod.materialize()]);
    expect([a.final, b.final, c]).toEqual(["answer 1", "answer 2", undefined]);
    expect(clock.calls).toBe(1);
    const segments = await store.listSegments();
    expect(segments).toHaveLength(1);
    const { records } = await store.readSegment(segments[0]!);
    expect(records.filter((r) => r.type === "segment_start")).toHaveLength(1);
    expect(records.map((r) => (r.type === "message" ? r.message : r.type))).toEqual([
      "segment_start",
      { role: "user", content: "a" },
      { role: "assistant", content: "answer 1" },
      { role: "user", content: "b" },
      { role: "assistant", content: "answer 2" },
    ]);
    expect(new Set(client.requests.map((r) => r.systemPrompt)).size).toBe(1);
  });

  test("messages_are_logged_as_they_happen_so_a_failed_turn_keeps_them", async () => {
    const dir = await podDir();
    const outage = new Error("provider outage");
    const client = new ScriptedLlmClient((_request, index): LlmResponse => {
      if (index === 0)
        return { content: "reading", toolCalls: [{ id: "c1", name: "read_file", input: { path: "x" } }] };
      throw outage;
    });
    const worker = new Worker({ client });
    worker.tools.register(echoTool("read_file"));
    const store = new FileSegmentStore(join(dir.root, "log"));
    const pod = await Pod.fromManifest(dir.manifest, { worker, store, clock: countingClock(NOW), env: dir.env });
    const error = await rejection(pod.run("go"));
    expect((error as { cause?: unknown }).cause ?? error).toBe(outage);
    // Read while the pod still holds its segment: the log already has the whole turn so far.
    const { records } = await store.readSegment(pod.segmentId!);
    const logged = records.slice(1).map((r) => (r.type === "message" ? r.message : undefined));
    expect(logged).toEqual(worker.getHistory());
    expect(logged.map((m) => (m as { role: string }).role)).toEqual(["user", "assistant", "tool"]);
    await pod.close();
    // After close the worker no longer writes to the pod's log.
    expect(await rejection(worker.run("outside"))).toBeInstanceOf(Error);
    expect((await store.readSegment(pod.segmentId!)).records).toHaveLength(records.length);
  });

  test("tool_calls_and_results_are_logged_in_order", async () => {
    const dir = await podDir();
    const client = new ScriptedLlmClient([
      { content: "reading", toolCalls: [{ id: "c1", name: "read_file", input: { path: "x" } }] },
      { content: "done" },
    ]);
    const worker = new Worker({ client });
    worker.tools.register(echoTool("read_file"));
    const store = new MemorySegmentStore();
    const pod = await Pod.fromManifest(dir.manifest, { worker, store, clock: countingClock(NOW), env: dir.env });
    await pod.run("go");
    const { records } = await store.readSegment(pod.segmentId!);
    expect(records.slice(1).map((r) => (r.type === "message" ? r.message : undefined))).toEqual(worker.getHistory());
    expect(worker.getHistory().map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});

describe("AGENTS.md", () => {
  test("agents_md_is_injected_as_trailing_section_when_present", async () => {
    const dir = await podDir(INSTRUCTION, "Use tabs.\n");
    const { pod, worker, notifier } = await start(dir);
    await pod.run("hello");
    const prompt = worker.getSystemPrompt()!;
    expect(prompt.endsWith("\n---\n## Project instructions (AGENTS.md)\n\nUse tabs.\n")).toBe(true);
    expect(prompt.indexOf("## Working boundaries")).toBeLessThan(prompt.indexOf("## Project instructions (AGENTS.md)"));
    expect(notifier.warnings).toEqual([]);
  });

  test("agents_md_absent_omits_trailing_section", async () => {
    const dir = await podDir();
    const { pod, worker, notifier } = await start(dir);
    await pod.run("hello");
    const prompt = worker.getSystemPrompt()!;
    expect(prompt).not.toContain("AGENTS.md");
    expect(prompt).toContain("## Working boundaries");
    expect(prompt.trimEnd().endsWith(`  - ${dir.pwd}`)).toBe(true);
    expect(notifier.warnings).toEqual([]);
  });

  test("agents_md_is_read_at_first_run_not_at_creation", async () => {
    const dir = await podDir();
    const { pod, worker } = await start(dir);
    await writeFile(join(dir.pwd, "AGENTS.md"), "Written after creation.\n");
    await pod.run("hello");
    expect(worker.getSystemPrompt()).toContain("Written after creation.");
  });

  test("agents_md_warnings_reach_the_notifier", async () => {
    const dir = await podDir(INSTRUCTION);
    await writeFile(join(dir.pwd, "AGENTS.md"), Buffer.from([0xc3, 0x28]));
    const { pod, worker, notifier } = await start(dir);
    await pod.run("hello");
    expect(worker.getSystemPrompt()).not.toContain("Project instructions");
    expect(notifier.warnings.map((w) => w.code)).toEqual(["AGENTS_MD_NOT_UTF8"]);
  });

  test("agents_md_not_reread_after_compact", async () => {
    const dir = await podDir(INSTRUCTION, "Original rules.\n");
    const { pod, worker, client, store } = await start(dir);
    await pod.run("one");
    const prompt = worker.getSystemPrompt();
    await writeFile(join(dir.pwd, "AGENTS.md"), "Changed rules.\n");
    await pod.compact(() => "we said hello");
    await pod.run("two");
    expect(worker.getSystemPrompt()).toBe(prompt);
    for (const request of client.requests) {
      expect(request.systemPrompt).toBe(prompt);
      expect(request.systemPrompt).toContain("Original rules.");
      expect(request.systemPrompt).not.toContain("Changed rules.");
    }
    const { records } = await store.readSegment(pod.segmentId!);
    expect(records[0]?.type === "segment_start" && records[0].systemPrompt).toBe(prompt);
  });
});

describe("compact", () => {
  test("compact_preserves_system_prompt", async () => {
    const dir = await podDir(INSTRUCTION, "Rules.\n");
    const clock = countingClock(NOW);
    const { pod, worker, client, store } = await start(dir, { clock });
    await pod.run("one");
    await pod.run("two");
    const first = pod.segmentId!;
    const prompt = worker.getSystemPrompt()!;
    const seen: unknown[] = [];
    await pod.compact((history) => {
      seen.push(history.map((m) => m.content));
      return "the user counted to two";
    });
    expect(seen).toEqual([["one", "answer 1", "two", "answer 2"]]);
    const second = pod.segmentId!;
    expect(second).not.toBe(first);
    expect(worker.getSystemPrompt()).toBe(prompt);
    expect(worker.getHistory()).toEqual([summaryMessage("the user counted to two")]);
    expect(worker.getHistory()[0]?.content).toBe("Summary of the conversation so far:\nthe user counted to two");

    await pod.run("three");
    const last = client.requests.at(-1)!;
    expect(last.systemPrompt).toBe(prompt);
    expect(last.messages).toEqual([summaryMessage("the user counted to two"), { role: "user", content: "three" }]);
    expect(clock.calls).toBe(2); // the render, then the new segment's createdAt; no second render

    const firstLog = await store.readSegment(first);
    const secondLog = await store.readSegment(second);
    expect(firstLog.records).toHaveLength(5);
    expect(secondLog.records[0]).toEqual({
      type: "segment_start",
      systemPrompt: prompt,
      sources: (firstLog.records[0] as { sources: unknown }).sources,
      createdAt: NOW,
      previousSegment: first,
      summary: "the user counted to two",
      tools: (firstLog.records[0] as { tools: unknown }).tools,
      toolDefinitions: (firstLog.records[0] as { toolDefinitions: unknown }).toolDefinitions,
      sections: (firstLog.records[0] as { sections: unknown }).sections,
    });
    expect(secondLog.records.slice(1)).toEqual([
      { type: "message", version: 2, message: { role: "user", content: "three" } },
      { type: "message", version: 2, message: { role: "assistant", content: "answer 3" }, call: expect.any(Object) },
    ]);
  });

  test("resume_right_after_compact_makes_no_model_call", async () => {
    const dir = await podDir();
    const { pod, worker, client, store } = await start(dir);
    await pod.run("one");
    await pod.compact(() => "one was said");
    const requests = client.requests.length;
    const result = await pod.resume();
    expect(result).toEqual({ messages: [], final: "", iterations: 0 });
    expect(client.requests.length).toBe(requests);
    expect(worker.getHistory()).toEqual([summaryMessage("one was said")]);
    expect((await store.readSegment(pod.segmentId!)).records).toHaveLength(1);
    // A real turn after it is a turn as usual, and resume() then continues as usual.
    await pod.run("two");
    expect(client.requests.length).toBe(requests + 1);
    expect(await pod.resume()).toEqual({ messages: [], final: "answer 2", iterations: 0 });
  });

  test("compact_before_first_run_is_not_materialized", async () => {
    const dir = await podDir();
    const { pod, store } = await start(dir);
    const error = await rejection(pod.compact(() => "nothing"));
    expect(PodError.is(error) && error.code).toBe("NOT_MATERIALIZED");
    expect(await store.listSegments()).toEqual([]);
  });
});

describe("Pod.restore", () => {
  async function firstLife(dir: PodDir, storeDir: string) {
    const { worker, client } = newWorker();
    const store = new FileSegmentStore(storeDir);
    const pod = await Pod.fromManifest(dir.manifest, { worker, store, clock: countingClock(NOW), env: dir.env });
    await pod.run("one");
    await pod.compact(() => "one was said");
    await pod.run("two");
    await pod.close();
    return { pod, worker, client, segmentId: pod.segmentId! };
  }

  test("restore_sets_prompt_and_history_and_appends_to_the_same_segment", async () => {
    const dir = await podDir(INSTRUCTION, "Rules.\n");
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    const { worker, client } = newWorker();
    const store = new FileSegmentStore(storeDir);
    const notifier = collectWarnings();
    const pod = await Pod.restore(store, before.segmentId, worker, { notifier });
    expect(notifier.warnings).toEqual([]);
    expect(pod.isMaterialized).toBe(true);
    expect(pod.segmentId).toBe(before.segmentId);
    expect(worker.getSystemPrompt()).toBe(before.worker.getSystemPrompt());
    expect(worker.getHistory()).toEqual(before.worker.getHistory());
    await pod.run("three");
    expect(client.requests[0]?.systemPrompt).toBe(before.worker.getSystemPrompt());
    await pod.close();
    const { records } = await store.readSegment(before.segmentId);
    expect(records.slice(-2)).toEqual([
      { type: "message", version: 2, message: { role: "user", content: "three" } },
      { type: "message", version: 2, message: { role: "assistant", content: "answer 1" }, call: expect.any(Object) },
    ]);
    expect(await store.listSegments()).toHaveLength(2);
  });

  test("restore_warns_sources_changed_and_keeps_the_stored_prompt", async () => {
    const dir = await podDir(INSTRUCTION, "Rules.\n");
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    const main = await dir.writePrompt("main", "A completely different instruction.\n");
    await writeFile(join(dir.pwd, "AGENTS.md"), "New rules.\n");
    const { worker } = newWorker();
    const notifier = collectWarnings();
    const pod = await Pod.restore(new FileSegmentStore(storeDir), before.segmentId, worker, { notifier });
    await pod.close();
    expect(notifier.warnings.map((w) => [w.code, w.file])).toEqual([["SOURCES_CHANGED", main]]);
    expect(notifier.warnings[0]?.message).toContain("$workspace/main");
    expect(notifier.warnings[0]?.message).toContain("stored prompt is kept");
    expect(worker.getSystemPrompt()).toBe(before.worker.getSystemPrompt());
  });

  test("restore_with_a_loader_reresolves_sources", async () => {
    const dir = await podDir(INSTRUCTION);
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    const notifier = collectWarnings();
    const loader = PromptLoader.forPod({ cwd: dir.pwd, env: dir.env });
    await Pod.restore(new FileSegmentStore(storeDir), before.segmentId, newWorker().worker, { notifier, loader }).then(
      (p) => p.close(),
    );
    expect(notifier.warnings).toEqual([]);
    await dir.writePrompt("main", "changed\r\n");
    await Pod.restore(new FileSegmentStore(storeDir), before.segmentId, newWorker().worker, { notifier, loader }).then(
      (p) => p.close(),
    );
    expect(notifier.warnings.map((w) => w.code)).toEqual(["SOURCES_CHANGED"]);
  });

  test("crlf_only_changes_are_not_source_changes", async () => {
    const dir = await podDir(INSTRUCTION);
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    await dir.writePrompt("main", `\uFEFF${INSTRUCTION.replace(/\n/g, "\r\n")}`);
    const notifier = collectWarnings();
    const pod = await Pod.restore(new FileSegmentStore(storeDir), before.segmentId, newWorker().worker, { notifier });
    await pod.close();
    expect(notifier.warnings).toEqual([]);
  });

  test("restore_recovers_a_torn_tail_with_a_warning", async () => {
    const dir = await podDir();
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    const store = new FileSegmentStore(storeDir);
    await appendFile(store.segmentFile(before.segmentId), '{"seq":99,"half a rec');
    const notifier = collectWarnings();
    const { worker } = newWorker();
    const pod = await Pod.restore(store, before.segmentId, worker, { notifier });
    await pod.close();
    expect(notifier.warnings.map((w) => w.code)).toEqual(["SEGMENT_TAIL_RECOVERED"]);
    expect(worker.getHistory()).toEqual(before.worker.getHistory());
  });

  test("resume_after_restoring_a_just_compacted_segment_makes_no_model_call", async () => {
    const dir = await podDir();
    const storeDir = join(dir.root, "segments");
    const first = await Pod.fromManifest(dir.manifest, {
      worker: newWorker().worker,
      store: new FileSegmentStore(storeDir),
      clock: countingClock(NOW),
      env: dir.env,
    });
    await first.run("one");
    await first.compact(() => "one was said");
    await first.close();
    const { worker, client } = newWorker();
    const pod = await Pod.restore(new FileSegmentStore(storeDir), first.segmentId!, worker);
    expect(await pod.resume()).toEqual({ messages: [], final: "", iterations: 0 });
    expect(client.requests).toEqual([]);
    await pod.close();
  });

  test("restore_into_a_worker_with_a_run_in_flight_reports_busy_not_corrupt", async () => {
    const dir = await podDir();
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    const store = new FileSegmentStore(storeDir);
    const bytes = await readFile(store.segmentFile(before.segmentId));
    let answer: (response: LlmResponse) => void = () => {};
    const client: LlmClient = { complete: () => new Promise((resolve) => (answer = resolve)) };
    const worker = new Worker({ client });
    worker.setSystemPrompt("a prompt of its own");
    const inFlight = worker.run("still thinking");
    const error = await rejection(Pod.restore(store, before.segmentId, worker));
    expect(WorkerError.is(error) && error.code).toBe("BUSY");
    expect(SegmentStoreError.is(error)).toBe(false);
    expect((error as Error).message).toContain(`cannot restore segment ${before.segmentId}`);
    // The segment was neither changed nor left locked.
    expect(Buffer.compare(await readFile(store.segmentFile(before.segmentId)), bytes)).toBe(0);
    const opened = await store.openSegment(before.segmentId);
    expect(opened.warnings).toEqual([]);
    await opened.writer.close();
    answer({ content: "done" });
    expect((await inFlight).final).toBe("done");
  });

  test("restore_into_a_worker_attached_to_an_open_pod_is_refused", async () => {
    const dir = await podDir();
    const storeDir = join(dir.root, "segments");
    const before = await firstLife(dir, storeDir);
    const store = new FileSegmentStore(storeDir);
    const { pod: other, worker } = await start(dir);
    await other.run("the other pod's turn");
    const refused = await rejection(Pod.restore(store, before.segmentId, worker));
    expect(PodError.is(refused) && refused.code).toBe("WORKER_IN_USE");
    const again = await rejection(Pod.fromManifest(dir.manifest, { worker, store, env: dir.env }));
    expect(PodError.is(again) && again.code).toBe("WORKER_IN_USE");
    // Nothing was opened: the segment is free, and once the other pod is closed the worker is too.
    const opened = await store.openSegment(before.segmentId);
    await opened.writer.close();
    await other.close();
    const pod = await Pod.restore(store, before.segmentId, worker);
    expect(pod.segmentId).toBe(before.segmentId);
    await pod.close();
  });

  test("tool_input_that_is_not_plain_json_fails_the_turn_and_is_not_logged", async () => {
    const dir = await podDir();
    const client = new ScriptedLlmClient([
      { content: "", toolCalls: [{ id: "c1", name: "read_file", input: { when: new Date(0) } }] },
    ]);
    const { worker } = newWorker(client);
    const store = new MemorySegmentStore();
    const pod = await Pod.fromManifest(dir.manifest, { worker, store, clock: countingClock(NOW), env: dir.env });
    const error = await rejection(pod.run("read it"));
    expect(SegmentStoreError.is(error) && error.code).toBe("INVALID_ARGUMENT");
    expect((error as Error).message).toContain("a Date");
    expect(worker.getHistory()).toEqual([{ role: "user", content: "read it" }]);
    expect((await store.readSegment(pod.segmentId!)).records.slice(1)).toEqual([
      { type: "message", version: 2, message: { role: "user", content: "read it" } },
    ]);
    await pod.close();
  });

  test("closed_pod_refuses_more_turns", async () => {
    const dir = await podDir();
    const { pod } = await start(dir);
    await pod.run("one");
    await Promise.all([pod.close(), pod.close()]);
    const error = await rejection(pod.run("two"));
    expect(PodError.is(error) && error.code).toBe("POD_CLOSED");
  });
});

describe("previewSystemPrompt", () => {
  test("returns_the_sections_the_prompt_is_made_of", async () => {
    const dir = await podDir("Body for {{cwd}}\n", "Rules.\n");
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: ["b", "a"],
      now: new Date(NOW),
      env: dir.env,
    });
    expect(result.sections.instruction).toBe(`Body for ${dir.pwd}\n`);
    expect(result.sections.workingBoundaries).toBe(`Readable:\n  - ${dir.pwd}\nWritable:\n  - ${dir.pwd}`);
    expect(result.sections.agentsMd).toBe("Rules.\n");
    expect(result.agentsMd).toEqual({ file: join(dir.pwd, "AGENTS.md"), bytes: 7, totalBytes: 7, truncated: false });
    expect(result.prompt.startsWith(result.sections.instruction)).toBe(true);
    expect(result.prompt).toContain(`## Working boundaries\n\n${result.sections.workingBoundaries}`);
    expect(result.sources.map((s) => s.ref)).toEqual(["$workspace/main"]);
    expect(result.warnings).toEqual([]);
  });

  test("truncated_agents_md_shows_its_notice_in_the_prompt", async () => {
    const dir = await podDir("x\n", `${"a".repeat(70_000)}\n`);
    const notifier = collectWarnings();
    const result = await previewSystemPrompt({
      manifest: dir.manifest,
      tools: [],
      now: new Date(NOW),
      env: dir.env,
      notifier,
    });
    expect(result.prompt).toContain("[AGENTS.md truncated: showing the first 65536 of 70001 bytes]");
    expect(result.agentsMd).toEqual({
      file: join(dir.pwd, "AGENTS.md"),
      bytes: 65536,
      totalBytes: 70001,
      truncated: true,
    });
    expect(result.warnings.map((w) => w.code)).toEqual(["AGENTS_MD_TRUNCATED"]);
    expect(notifier.warnings).toEqual(result.warnings);
  });
});

describe("the prompt a consumer reads", () => {
  test("system_prompt_and_its_sections_are_known_after_materialization_and_after_a_restore", async () => {
    const dir = await podDir();
    const { pod, worker, store } = await start(dir);
    expect([pod.systemPrompt, pod.sections, pod.tools]).toEqual([undefined, undefined, undefined]);
    await pod.run("hello");
    const prompt = worker.getSystemPrompt()!;
    expect(pod.systemPrompt).toBe(prompt);
    const sections = pod.sections!;
    expect(Object.keys(sections)).toEqual(["instruction", "workingBoundaries"]);
    expect(prompt.slice(sections.workingBoundaries!.start, sections.workingBoundaries!.end)).toMatch(
      /^---\n## Working boundaries\n\nReadable:\n/,
    );
    expect(sections.instruction!.start).toBe(0);
    expect(sections.workingBoundaries!.end).toBe(prompt.length);
    const segmentId = pod.segmentId!;
    await pod.close();
    const again = new Worker({ client: new ScriptedLlmClient([]) });
    const restored = await Pod.restore(store, segmentId, again);
    expect([restored.systemPrompt, restored.sections, restored.tools]).toEqual([
      prompt,
      sections,
      worker.tools.names(),
    ]);
    await restored.close();
  });

  test("restoring_into_a_worker_with_other_tools_warns_tools_changed", async () => {
    const dir = await podDir();
    const { pod, store } = await start(dir);
    await pod.run("hello");
    const segmentId = pod.segmentId!;
    await pod.close();
    const other = new Worker({ client: new ScriptedLlmClient([]) });
    other.tools.register(echoTool("something_else"));
    const notifier = collectWarnings();
    const restored = await Pod.restore(store, segmentId, other, { notifier });
    expect(notifier.warnings.map((w) => w.code)).toEqual(["TOOLS_CHANGED"]);
    expect(notifier.warnings[0]!.message).toMatch(/now offers something_else; requests will offer other tools/);
    await restored.close();
  });
});
