import { didYouMean } from "@insomnia/errors";
import type { Tool } from "@insomnia/worker";
import type { CommandResult, Sandbox } from "./sandbox.ts";
import { SandboxError } from "./sandbox-error.ts";

/** The tool's name, as the model calls it and `worker.tools` lists it. */
export const RUN_COMMAND_TOOL_NAME = "run_command";

/** Timeout of a command when the call gives none (and the largest one unless the manifest allows more). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;

/** Bytes of stdout and of stderr each kept for the model (first and last half). */
export const DEFAULT_COMMAND_OUTPUT_BYTES: number = 32 * 1024;

/** Longest `command` accepted, in bytes (Linux takes at most 128 KiB in one argument). */
export const MAX_COMMAND_BYTES = 100_000;

/** Options of {@link runCommandTool}. */
export interface RunCommandToolOptions {
  /** Largest `timeout_ms` a call may ask for (`worker.run_command.timeout_ms`; default 120,000). */
  readonly maxTimeoutMs?: number | undefined;
  /** Bytes of stdout and of stderr each kept (default {@link DEFAULT_COMMAND_OUTPUT_BYTES}). */
  readonly maxOutputBytes?: number | undefined;
}

/** What the worker passes besides the input: the turn's signal. */
export interface RunCommandExecuteOptions {
  readonly signal?: AbortSignal | undefined;
}

/** The run_command tool: a worker `Tool` whose execute also takes the turn's signal. */
export interface RunCommandTool extends Tool {
  execute(input: unknown, options?: RunCommandExecuteOptions): Promise<string>;
}

interface RunCommandInput {
  readonly command: string;
  readonly timeout_ms?: number;
}

/**
 * The `run_command` tool: `bash -c command` in the sandbox's directory, every call inside
 * `sandbox` (no input chooses otherwise). The result gives the exit code, stdout and stderr
 * (each cut in the middle past its limit, with a note); a command still running at its
 * timeout, or when the turn's signal aborts, is killed with every process it started.
 */
export function runCommandTool(sandbox: Sandbox, options: RunCommandToolOptions = {}): RunCommandTool {
  const maxTimeoutMs = positive(options.maxTimeoutMs, "maxTimeoutMs") ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const maxOutputBytes = positive(options.maxOutputBytes, "maxOutputBytes") ?? DEFAULT_COMMAND_OUTPUT_BYTES;
  const defaultTimeoutMs = Math.min(DEFAULT_COMMAND_TIMEOUT_MS, maxTimeoutMs);
  return {
    name: RUN_COMMAND_TOOL_NAME,
    description: [
      `Runs a bash command (bash -c) in ${sandbox.cwd} inside a sandbox and returns its exit code, stdout and stderr.`,
      "Only the paths of the Working boundaries exist there: readable ones read-only, writable ones writable (their .git read-only); everything else, the home directory included, is absent.",
      `/tmp is private and emptied after each command; HOME is ${sandbox.cwd}; the environment has only PATH, LANG and HOME.`,
      sandbox.network
        ? "The network is reachable."
        : "There is no network (not even services on the machine's localhost).",
      `Each command is killed with every process it started after timeout_ms (default ${defaultTimeoutMs}, at most ${maxTimeoutMs}).`,
      ...(sandbox.processLimit().kind === "none"
        ? []
        : [`A command can run at most ${sandbox.maxProcesses} processes and threads at once; more fail to start.`]),
      `Output past ${maxOutputBytes} bytes per stream is cut in the middle with a note; filter long output (grep, head, tail).`,
    ].join(" "),
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The bash command line to run." },
        timeout_ms: {
          type: "integer",
          minimum: 1,
          maximum: maxTimeoutMs,
          description: `Milliseconds before the command is killed (default ${defaultTimeoutMs}).`,
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    async execute(input: unknown, execute?: RunCommandExecuteOptions): Promise<string> {
      const { command, timeout_ms } = checkInput(input, maxTimeoutMs);
      const timeoutMs = timeout_ms ?? defaultTimeoutMs;
      const result = await sandbox.run(command, { timeoutMs, signal: execute?.signal, maxOutputBytes });
      return formatResult(result, timeoutMs);
    },
  };
}

/** The text the model reads for a finished (or killed) command. */
export function formatResult(result: CommandResult, timeoutMs: number): string {
  const status = result.timedOut
    ? `killed: still running after ${timeoutMs} ms (its timeout); the command and every process it started were stopped`
    : `exit code: ${result.exitCode ?? "none (killed)"}`;
  const stream = (name: string, text: string): string =>
    text === "" ? `${name}: (empty)` : `${name}:\n${text.endsWith("\n") ? text : `${text}\n`}`;
  return `${status}\n${stream("stdout", result.stdout.text)}${result.stdout.text === "" ? "\n" : ""}${stream("stderr", result.stderr.text)}`;
}

function checkInput(input: unknown, maxTimeoutMs: number): RunCommandInput {
  const fail = (detail: string): SandboxError =>
    new SandboxError("INVALID_INPUT", `${RUN_COMMAND_TOOL_NAME}: ${detail}; nothing was run`);
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw fail(`the input must be an object with "command" and optionally "timeout_ms"`);
  }
  const record = input as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key === "command" || key === "timeout_ms") continue;
    const hint = didYouMean(key, ["command", "timeout_ms"]);
    throw fail(
      `unknown field "${key}"${hint === undefined ? "" : ` (did you mean "${hint}"?)`}; the fields are command, timeout_ms`,
    );
  }
  const { command, timeout_ms } = record;
  if (typeof command !== "string" || command.trim() === "") throw fail(`"command" must be a non-empty string`);
  if (command.includes("\0")) throw fail(`"command" contains a NUL byte, which no command line can hold`);
  if (Buffer.byteLength(command) > MAX_COMMAND_BYTES) {
    throw fail(`"command" is longer than ${MAX_COMMAND_BYTES} bytes; write a script file and run it`);
  }
  if (timeout_ms !== undefined) {
    if (typeof timeout_ms !== "number" || !Number.isSafeInteger(timeout_ms) || timeout_ms < 1) {
      throw fail(`"timeout_ms" must be a whole number of milliseconds, 1 or more`);
    }
    if (timeout_ms > maxTimeoutMs) {
      throw fail(`"timeout_ms" is at most ${maxTimeoutMs} here (worker.run_command.timeout_ms); ask for less`);
    }
    return { command, timeout_ms };
  }
  return { command };
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new SandboxError(
      "INVALID_OPTIONS",
      `runCommandTool option ${name} must be a whole number of 1 or more, got ${String(value)}`,
    );
  }
  return value;
}
