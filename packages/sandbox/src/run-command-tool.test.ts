import { tmpdir } from "node:os";
import { Scope } from "@insomnia/scope";
import { describe, expect, test } from "vitest";
import { formatResult, runCommandTool } from "./run-command-tool.ts";
import { Sandbox } from "./sandbox.ts";
import { SandboxError } from "./sandbox-error.ts";

// A bwrap path that does not exist: a refused input must never get as far as starting it.
function tool(maxTimeoutMs?: number) {
  const scope = Scope.fromConfig({ allow: [{ target: ".", permission: "read" }] }, tmpdir());
  return runCommandTool(new Sandbox(scope, { bwrapPath: "/nonexistent/bwrap" }), { maxTimeoutMs });
}

async function refusal(input: unknown, maxTimeoutMs?: number): Promise<string> {
  const error: unknown = await Promise.resolve()
    .then(() => tool(maxTimeoutMs).execute(input))
    .catch((e: unknown) => e);
  expect(SandboxError.is(error) && error.code).toBe("INVALID_INPUT");
  return (error as Error).message;
}

describe("run_command input", () => {
  test("bad_inputs_are_refused_with_what_to_send_and_nothing_runs", async () => {
    expect(await refusal("ls")).toBe(
      'run_command: the input must be an object with "command" and optionally "timeout_ms"; nothing was run',
    );
    expect(await refusal({ command: "" })).toBe('run_command: "command" must be a non-empty string; nothing was run');
    expect(await refusal({ comand: "ls" })).toBe(
      'run_command: unknown field "comand" (did you mean "command"?); the fields are command, timeout_ms; nothing was run',
    );
    expect(await refusal({ command: "ls", sandbox: false })).toMatch(/unknown field "sandbox"/);
    expect(await refusal({ command: "ls", timeout_ms: 0 })).toMatch(/"timeout_ms" must be a whole number/);
    expect(await refusal({ command: "a\0b" })).toMatch(/NUL byte/);
    expect(await refusal({ command: "x".repeat(100_001) })).toMatch(/longer than 100000 bytes/);
  });

  test("a_timeout_above_the_manifest_maximum_is_refused", async () => {
    expect(await refusal({ command: "sleep 1", timeout_ms: 120_001 })).toBe(
      'run_command: "timeout_ms" is at most 120000 here (worker.run_command.timeout_ms); ask for less; nothing was run',
    );
    expect(await refusal({ command: "sleep 1", timeout_ms: 5001 }, 5000)).toMatch(/at most 5000 here/);
  });

  test("the_definition_tells_the_model_the_limits_and_the_network", () => {
    const definition = tool(600_000);
    expect(definition.name).toBe("run_command");
    expect(definition.inputSchema).toMatchObject({
      required: ["command"],
      additionalProperties: false,
      properties: { timeout_ms: { maximum: 600_000 } },
    });
    expect(definition.description).toContain("timeout_ms (default 120000, at most 600000)");
    expect(definition.description).toContain("There is no network");
  });

  test("the_result_names_the_exit_code_and_both_streams", () => {
    const stream = (text: string) => ({ text, totalBytes: text.length, omittedBytes: 0 });
    expect(formatResult({ exitCode: 2, timedOut: false, stdout: stream("out"), stderr: stream("") }, 1000)).toBe(
      "exit code: 2\nstdout:\nout\nstderr: (empty)",
    );
    expect(formatResult({ exitCode: null, timedOut: true, stdout: stream(""), stderr: stream("e\n") }, 1000)).toBe(
      "killed: still running after 1000 ms (its timeout); the command and every process it started were stopped\nstdout: (empty)\nstderr:\ne\n",
    );
  });
});
