import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type FakeProvider, type FakeReply, startFakeProvider } from "@insomnia/ai-sdk/testing";
import { afterEach, describe, expect, test } from "vitest";
import { type PodRun, runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";

// What pod says when things go wrong: each message names what to do, and usage is counted.
const { box } = useSandbox();

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function workspace(replies: (index: number) => FakeReply): Promise<Record<string, string>> {
  fake = await startFakeProvider((_request, index) => replies(index));
  await box.write(".insomnia/prompts/instruction.md", "You are the pod.\n");
  await box.write(
    ".insomnia/pod.yaml",
    `worker:\n  instruction: "$workspace/instruction"\nprovider:\n  kind: anthropic\n  model: m\n  base_url: ${fake.baseURL}\n`,
  );
  return { ...box.env, XDG_STATE_HOME: join(box.home, "state"), ANTHROPIC_API_KEY: "sk-ant-test" };
}

const pod = (env: Record<string, string>, ...args: string[]): Promise<PodRun> =>
  runPodInProcess(args, { cwd: box.ws, env });

async function segmentFile(env: Record<string, string>): Promise<string> {
  const root = join(env.XDG_STATE_HOME!, "insomnia", "pods");
  const [dir] = await readdir(root);
  const files = (await readdir(join(root, dir!))).filter((f) => f.startsWith("seg-") && !f.endsWith(".lock"));
  return join(root, dir!, files.sort()[0]!);
}

describe("run messages", () => {
  test("max_turns_is_followed_by_the_usage_of_the_calls_made", async () => {
    const env = await workspace(() => ({
      toolCalls: [{ id: "t", name: "nothing", input: {} }],
      usage: { input: 10, output: 2 },
    }));
    const run = await pod(env, "run", "--overlay", "worker.max_turns = 2", "loop");
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines.at(-2)).toMatch(/^pod: MAX_TURNS: /);
    expect(lines.at(-1)).toMatch(
      /^pod: 2 model calls, 20 input tokens \(0 cache read, 0%; 0 cache write\), 4 output tokens/,
    );
  });

  test("an_unanswered_turn_is_shown_as_such_not_as_zero_model_calls", async () => {
    const env = await workspace(() => ({ status: 401, body: '{"type":"error","error":{"message":"bad key"}}' }));
    const failed = await pod(env, "run", "hello");
    expect(failed.code).toBe(1);
    expect(failed.stderr).not.toMatch(/model call/);
    const log = await pod(env, "log");
    expect(log.stdout).toContain("> hello\n  no answer yet (pod resume retries it)\n");
    expect(log.stdout).not.toContain("usage: 0 model calls");
  });

  test("sources_changed_and_segment_corrupt_name_pod_run_new", async () => {
    const env = await workspace(() => ({ text: "ok" }));
    expect((await pod(env, "run", "one")).code).toBe(0);
    await box.write(".insomnia/prompts/instruction.md", "You are another pod.\n");
    const changed = await pod(env, "run", "two");
    expect(changed.code).toBe(0);
    expect(changed.stderr).toMatch(
      /warning: SOURCES_CHANGED: .*; this conversation keeps the prompt it started with; pod run --new starts one with the changed files\n/,
    );

    // Damage the middle of the log: the first message record.
    const file = await segmentFile(env);
    const lines = (await readFile(file, "utf8")).split("\n");
    lines[1] = lines[1]!.replace(/"one"/, '"0ne"');
    await writeFile(file, lines.join("\n"));
    const corrupt = await pod(env, "run", "three");
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toMatch(/SEGMENT_CORRUPT: .*; pod run --new starts a new conversation/);
  });
});

describe("pod prompt --tool", () => {
  test("takes_the_names_worker_tools_takes", async () => {
    const bash = await pod(box.env, "prompt", "--tool", "bash");
    expect(bash.code).toBe(2);
    expect(bash.stderr).toMatch(
      /^pod: USAGE: --tool 'bash' is not a tool a pod can have; the tools are edit_file, list_dir, read_file, .*as for worker\.tools/,
    );
    // An MCP server's tool name is one a pod can have.
    const mcp = await pod(box.env, "prompt", "--tool", "mcp__docs__search");
    expect(mcp.code).toBe(0);
    const typo = await pod(box.env, "prompt", "--tool", "read_fil");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('(did you mean "read_file"?)');
    // The manifest refuses the same name.
    await box.write(".insomnia/pod.yaml", "worker:\n  tools: [bash]\n");
    const manifest = await pod(box.env, "check");
    expect(manifest.code).toBe(1);
    expect(manifest.stderr).toMatch(/worker\.tools\[0\] is "bash", not a tool/);
  });
});
