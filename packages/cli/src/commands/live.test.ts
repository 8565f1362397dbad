import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider, FakeReply, RecordedRequest } from "@insomnia/ai-sdk/testing";
import { CONTINUE_PROMPT } from "@insomnia/worker";
import { afterEach, describe, expect, test } from "vitest";
import { BIN, runPod, runPodInProcess, useSandbox, fakeProviderEnv } from "../__fixtures__/sandbox.ts";
import type { PodRun } from "../__fixtures__/sandbox.ts";

const { box } = useSandbox();

let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Json = Record<string, unknown>;
const messagesOf = (r: RecordedRequest | undefined): unknown => (r?.json as Json | undefined)?.messages;

/** A promise opened by hand: the provider's pause. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

async function workspace(script: (request: RecordedRequest, index: number) => FakeReply) {
  fake = await startFakeProvider(script);
  await box.write(".insomnia/prompts/instruction.md", "You are the test pod.\n");
  await box.write(
    ".insomnia/pod.yaml",
    [
      "worker:",
      '  instruction: "$workspace/instruction"',
      "provider:",
      "  kind: anthropic",
      "  model: claude-sonnet-4-5",
      `  base_url: ${fake.baseURL}`,
      "",
    ].join("\n"),
  );
  return { ...box.env, XDG_STATE_HOME: join(box.home, "state"), ANTHROPIC_API_KEY: "sk-ant-test" };
}

/**
 * Runs the bin (or `command` through `script`, on a pseudo-terminal) and calls `onOutput` with
 * everything printed so far on each chunk, so a test reacts to output, never to a timer.
 */
function spawnPod(
  env: Record<string, string>,
  args: string[],
  onOutput: (stdout: string, kill: (signal: NodeJS.Signals) => void) => void = () => undefined,
  terminal = false,
): Promise<PodRun> {
  return new Promise((resolve) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const child = terminal
      ? spawn("script", ["-qfec", quoted, "/dev/null"], { cwd: box.ws, env: { PATH: process.env.PATH ?? "", ...env } })
      : spawn(process.execPath, [BIN, ...args], { cwd: box.ws, env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      onOutput(stdout, (signal) => child.kill(signal));
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.end();
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("pod run, live", () => {
  test("text_reaches_stdout_while_the_provider_is_paused_mid_answer", async () => {
    const pause = gate();
    const env = await workspace(() => ({ pieces: ["Hel", "lo there"], hold: pause.promise }));
    // The provider sends "Hel" and waits; it goes on only once "Hel" is on stdout.
    const run = await spawnPod(env, ["run", "hi"], (stdout) => {
      if (stdout.includes("Hel")) pause.open();
    });
    expect([run.code, run.stdout]).toEqual([0, "Hello there\n"]);
    // stderr is not a terminal: no status line.
    expect(run.stderr).not.toContain("waiting for");
  });

  test("ctrl_c_mid_text_keeps_the_partial_answer_and_the_next_run_sends_its_message_after_it", async () => {
    const env = await workspace((_request, index) =>
      index === 0 ? { pieces: ["The answer ", "is 42"], hold: new Promise(() => undefined) } : { text: "ok" },
    );
    let sent = false;
    const run = await spawnPod(env, ["run", "q"], (stdout, kill) => {
      if (!sent && stdout.includes("The answer ")) {
        sent = true;
        kill("SIGINT");
      }
    });
    expect(run.code).toBe(130);
    expect(run.stdout).toBe("The answer \n");
    expect(run.stderr).toMatch(/interrupted: what was logged is kept \(the answer so far, marked interrupted\)/);
    const next = await runPodInProcess(["run", "next"], { cwd: box.ws, env });
    expect([next.code, next.stdout]).toEqual([0, "ok\n"]);
    expect(messagesOf(fake!.requests[1])).toEqual([
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [{ type: "text", text: "The answer " }] },
      { role: "user", content: [{ type: "text", text: "next", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  test("resume_after_ctrl_c_asks_the_model_to_go_on_from_the_partial_answer", async () => {
    const env = await workspace((_request, index) =>
      index === 0 ? { pieces: ["Half", " more"], hold: new Promise(() => undefined) } : { text: " and the rest" },
    );
    let sent = false;
    const run = await spawnPod(env, ["run", "q"], (stdout, kill) => {
      if (!sent && stdout.includes("Half")) {
        sent = true;
        kill("SIGINT");
      }
    });
    expect(run.code).toBe(130);
    const resumed = await runPodInProcess(["resume"], { cwd: box.ws, env });
    expect([resumed.code, resumed.stdout]).toEqual([0, " and the rest\n"]);
    expect((messagesOf(fake!.requests[1]) as unknown[]).slice(1)).toEqual([
      { role: "assistant", content: [{ type: "text", text: "Half" }] },
      { role: "user", content: [{ type: "text", text: CONTINUE_PROMPT, cache_control: { type: "ephemeral" } }] },
    ]);
  });

  test("on_a_terminal_a_status_line_waits_for_the_model_and_is_erased_when_text_starts", async () => {
    const pause = gate();
    const env = await workspace(() => ({ pieces: ["Hel", "lo"], hold: pause.promise }));
    const run = await spawnPod(
      env,
      ["run", "hi"],
      (output) => {
        if (output.includes("Hel")) pause.open();
      },
      true,
    );
    expect(run.code).toBe(0);
    const erase = "\r\u001b[2K";
    expect(run.stdout).toContain(`${erase}waiting for claude-sonnet-4-5 0s`);
    // Erased before the first text, and nothing redrawn after it.
    const firstText = run.stdout.indexOf("Hel");
    expect(run.stdout.slice(0, firstText).endsWith(erase)).toBe(true);
    expect(run.stdout.slice(firstText)).not.toContain("waiting for");
    expect(run.stdout.slice(firstText)).toContain("Hello");
  });

  test("a_models_control_characters_are_shown_visibly_on_a_terminal_and_kept_on_a_pipe", async () => {
    const env = await workspace(() => ({ pieces: ["red \u001b[31m", "text\u0007"] }));
    const onTerminal = await spawnPod(env, ["run", "--new", "hi"], () => undefined, true);
    expect(onTerminal.code).toBe(0);
    expect(onTerminal.stdout).toContain("red \\x1b[31mtext\\x07");
    expect(onTerminal.stdout).not.toContain("\u001b[31m");
    const piped = await spawnPod(env, ["run", "--new", "hi"]);
    expect([piped.code, piped.stdout]).toEqual([0, "red \u001b[31mtext\u0007\n"]);
  });

  test("an_image_goes_into_the_request_and_a_bad_one_is_a_usage_error_with_nothing_sent", async () => {
    const env = await workspace(() => ({ text: "a picture" }));
    await box.write("notes.txt", "not an image");
    const bad = await runPodInProcess(["run", "--image", "notes.txt", "what is it?"], { cwd: box.ws, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("INVALID_IMAGE");
    expect(bad.stderr).toContain("not a png, jpeg, gif or webp");
    expect(fake!.requests).toHaveLength(0);
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");
    await writeFile(join(box.ws, "pixel.png"), png);
    const good = await runPodInProcess(["run", "--image", "pixel.png", "what is it?"], { cwd: box.ws, env });
    expect([good.code, good.stdout]).toEqual([0, "a picture\n"]);
    expect(fake!.requests[0]!.body).toContain(
      `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"${png.toString("base64")}"}`,
    );
  });

  test("reasoning_is_printed_on_stderr_only_with_the_reasoning_flag", async () => {
    const env = await workspace(() => ({ reasoning: { text: "Let me think.", signature: "sig" }, text: "Done." }));
    const quiet = await runPodInProcess(["run", "hi"], { cwd: box.ws, env });
    expect([quiet.code, quiet.stdout]).toEqual([0, "Done.\n"]);
    expect(quiet.stderr).not.toContain("Let me think.");
    const shown = await runPodInProcess(["run", "--reasoning", "again"], { cwd: box.ws, env });
    expect([shown.code, shown.stdout]).toEqual([0, "Done.\n"]);
    expect(shown.stderr).toContain("Let me think.\n");
    // The first answer's thinking block went back with its signature.
    expect(fake!.requests[1]!.body).toContain('{"type":"thinking","thinking":"Let me think.","signature":"sig"}');
  });

  test("on_a_terminal_a_retry_backoff_shows_its_status_line_and_it_is_erased_when_text_starts", async () => {
    // The first request is refused as overloaded, asking for a 1 s wait; the retry answers.
    const env = await workspace((_request, index) =>
      index === 0
        ? {
            status: 503,
            headers: { "retry-after-ms": "1000" },
            body: '{"type":"error","error":{"type":"overloaded_error","message":"busy"}}',
          }
        : { pieces: ["Hel", "lo"] },
    );
    const run = await spawnPod(env, ["run", "hi"], () => undefined, true);
    expect(run.code).toBe(0);
    expect(fake!.requests).toHaveLength(2);
    const erase = "\r\u001b[2K";
    // Attempt 2 of 3 (worker's default of 2 retries), the wait rounded up to whole seconds.
    expect(run.stdout).toContain(`${erase}retrying in 1s (2/3): PROVIDER_UNAVAILABLE`);
    const firstText = run.stdout.indexOf("Hel");
    const before = run.stdout.slice(0, firstText);
    // Waiting for the model first, then the back-off line in its place.
    expect(before).toContain(`${erase}waiting for claude-sonnet-4-5 0s`);
    expect(before.indexOf("retrying in")).toBeGreaterThan(before.indexOf("waiting for claude-sonnet-4-5"));
    expect(before.endsWith(erase)).toBe(true);
    expect(run.stdout.slice(firstText)).not.toMatch(/retrying in|waiting for/);
    expect(run.stdout.slice(firstText)).toContain("Hello");
  });
});

/** A workspace whose pod reasons (`provider.reasoning`) with `kind` against the fake provider. */
async function reasoningWorkspace(
  kind: "anthropic" | "openai",
  script: (request: RecordedRequest, index: number) => FakeReply,
) {
  fake = await startFakeProvider(script);
  await box.write(".insomnia/prompts/instruction.md", "You are the test pod.\n");
  await box.write("notes.txt", "the notes\n");
  await box.write(
    ".insomnia/pod.yaml",
    [
      "worker:",
      '  instruction: "$workspace/instruction"',
      "provider:",
      `  kind: ${kind}`,
      `  model: ${kind === "anthropic" ? "claude-sonnet-4-5" : "o3-mini"}`,
      `  base_url: ${fake.baseURL}`,
      "  reasoning:",
      "    effort: low",
      "",
    ].join("\n"),
  );
  return fakeProviderEnv(box);
}

/** Starts the bin; `stop(signal)` kills it, `done` is its end. */
function startPod(env: Record<string, string>, args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: box.ws, env: { PATH: process.env.PATH ?? "", ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.end();
  const done = new Promise<PodRun & { signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { stop: (signal: NodeJS.Signals) => child.kill(signal), done };
}

describe("reasoning across processes", () => {
  const thinking = { text: "Read the notes first.", signature: "EqQBCkgIARABGAIiQ+sig/==" };
  const item = { id: "rs_abc123", encrypted: "gAAAAB-enc+/==", text: "Read the notes first." };
  const call = { id: "call_1", name: "read_file", input: { path: "notes.txt" } };

  for (const kind of ["anthropic", "openai"] as const) {
    test(`a_${kind}_reasoning_tool_loop_killed_mid_loop_is_resumed_by_a_new_process_with_the_reasoning_sent_back_byte_for_byte`, async () => {
      let crash: (() => void) | undefined;
      const env = await reasoningWorkspace(kind, (_request, index) => {
        if (index === 0) return { reasoning: kind === "anthropic" ? thinking : item, toolCalls: [call] };
        // The tool loop's second request: the first process dies while waiting for it.
        if (index === 1) {
          setImmediate(() => crash?.());
          return { hang: true };
        }
        return { text: "The notes say: the notes." };
      });
      const first = startPod(env, ["run", "what do the notes say?"]);
      crash = () => first.stop("SIGKILL");
      expect((await first.done).signal).toBe("SIGKILL");
      const second = await runPod(["resume"], { cwd: box.ws, env });
      expect([second.code, second.stdout]).toEqual([0, "The notes say: the notes.\n"]);
      const [, inLoop, restored] = fake!.requests;
      // What the first process sent in its tool loop, the new process sends again byte for byte.
      expect(restored!.body).toBe(inLoop!.body);
      if (kind === "anthropic") {
        expect(restored!.body).toContain(
          `{"role":"assistant","content":[{"type":"thinking","thinking":${JSON.stringify(thinking.text)},"signature":${JSON.stringify(thinking.signature)}},{"type":"tool_use","id":"call_1","name":"read_file","input":{"path":"notes.txt"}`,
        );
      } else {
        expect(restored!.body).toContain(
          `{"type":"reasoning","id":"rs_abc123","encrypted_content":"gAAAAB-enc+/==","summary":[{"type":"summary_text","text":${JSON.stringify(item.text)}}]}`,
        );
        expect(restored!.body).toContain('"type":"function_call_output","call_id":"call_1"');
      }
    });
  }

  test("a_finished_reasoning_tool_turn_is_sent_back_by_the_next_pod_run_process", async () => {
    const env = await reasoningWorkspace("anthropic", (_request, index) =>
      index === 0
        ? { reasoning: thinking, toolCalls: [call] }
        : index === 1
          ? { text: "It says the notes." }
          : { text: "ok" },
    );
    const first = await runPodInProcess(["run", "what do the notes say?"], { cwd: box.ws, env });
    expect([first.code, first.stdout]).toEqual([0, "It says the notes.\n"]);
    const second = await runPod(["run", "thanks"], { cwd: box.ws, env });
    expect([second.code, second.stdout]).toEqual([0, "ok\n"]);
    const block = `{"type":"thinking","thinking":${JSON.stringify(thinking.text)},"signature":${JSON.stringify(thinking.signature)}}`;
    expect(fake!.requests[1]!.body).toContain(block);
    expect(fake!.requests[2]!.body).toContain(block);
    // The second process's request starts with the first's last request, byte for byte, minus its cache breakpoint.
    const inLoop = fake!.requests[1]!.json as { messages: unknown[] };
    const next = fake!.requests[2]!.json as { messages: unknown[] };
    expect(JSON.stringify(next.messages[1])).toBe(JSON.stringify(inLoop.messages[1]));
  });
});
