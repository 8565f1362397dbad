import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import type { Scope } from "@insomnia/scope";
import { bwrapArgs, emptyFdCount } from "./bwrap-args.ts";
import { effectiveScope, type MountOp, planMounts, type SystemView } from "./mount-plan.ts";
import { type CapturedOutput, OutputCapture } from "./output-capture.ts";
import { CommandCgroup, DEFAULT_MAX_PROCESSES, type ProcessLimit, processLimitFor } from "./process-limit.ts";
import { SandboxError } from "./sandbox-error.ts";
import { systemEntries, unreadableSystemEntries } from "./system-paths.ts";

/** `PATH` inside the sandbox when the caller's environment has none. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Options of a {@link Sandbox}. */
export interface SandboxOptions {
  /** The bubblewrap program ({@link detectSandbox} finds it). */
  readonly bwrapPath: string;
  /** Let commands use the machine's network (default false: only the sandbox's own loopback). */
  readonly network?: boolean | undefined;
  /** Where `PATH` and `LANG` are taken from; nothing else of it reaches a command. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Directory commands start in and their `HOME` (default the scope's base, the pod's pwd). */
  readonly cwd?: string | undefined;
  /** Processes (threads included) one command may run at once (default {@link DEFAULT_MAX_PROCESSES}). */
  readonly maxProcesses?: number | undefined;
  /** How that is enforced (default: what `detectSandbox` found for this bwrap, looked at once per process). */
  readonly processLimit?: ProcessLimit | undefined;
}

/** Options of one {@link Sandbox.run}. */
export interface SandboxRunOptions {
  /** Milliseconds after which the command and every process it started are killed. */
  readonly timeoutMs: number;
  /** Kills the command and every process it started when aborted; `run` then throws `ABORTED`. */
  readonly signal?: AbortSignal | undefined;
  /** Bytes kept of stdout and of stderr each (first and last half); the rest is counted. */
  readonly maxOutputBytes: number;
}

/** How a command ended and what it wrote. */
export interface CommandResult {
  /** Its exit status; null when it was killed. */
  readonly exitCode: number | null;
  /** True when it was killed at its timeout. */
  readonly timedOut: boolean;
  readonly stdout: CapturedOutput;
  readonly stderr: CapturedOutput;
}

/**
 * Runs commands in a bubblewrap sandbox built from a Scope: system directories read-only,
 * the scope's targets as it grants them (non-recursive rules to their direct children only,
 * `.git` read-only inside writable targets, denied paths hidden), nothing else of the file
 * system, a private `/tmp`, new PID/IPC/network namespaces, no capabilities, and only
 * `PATH`, `LANG` and `HOME` in the environment. Each command may run at most `maxProcesses`
 * processes at once (see {@link ProcessLimit}), so a fork bomb cannot fill the machine.
 */
export class Sandbox {
  /** The directory commands start in, also their `HOME`. */
  readonly cwd: string;
  /** Whether commands reach the machine's network. */
  readonly network: boolean;
  readonly #bwrapPath: string;
  readonly #env: Readonly<Record<string, string>>;
  readonly #scope: Scope;
  readonly #maxProcesses: number;
  #processLimit: ProcessLimit | undefined;
  // Looked at on the first command, not when the pod starts (walking /etc takes tens of ms).
  #view: { system: SystemView; effective: Scope } | undefined;

  constructor(scope: Scope, options: SandboxOptions) {
    if (typeof options?.bwrapPath !== "string" || options.bwrapPath === "") {
      throw new SandboxError("INVALID_OPTIONS", "Sandbox needs bwrapPath (detectSandbox() finds it)");
    }
    this.cwd = options.cwd ?? scope.base;
    this.network = options.network === true;
    this.#bwrapPath = options.bwrapPath;
    const env = options.env ?? process.env;
    this.#env = Object.freeze({
      PATH: env["PATH"] !== undefined && env["PATH"] !== "" ? env["PATH"] : DEFAULT_PATH,
      LANG: env["LANG"] !== undefined && env["LANG"] !== "" ? env["LANG"] : "C.UTF-8",
      HOME: this.cwd,
    });
    this.#scope = scope;
    const max = options.maxProcesses ?? DEFAULT_MAX_PROCESSES;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new SandboxError("INVALID_OPTIONS", `maxProcesses must be a positive whole number, got ${String(max)}`);
    }
    this.#maxProcesses = max;
    this.#processLimit = options.processLimit;
  }

  /** Processes (threads included) one command may run at once. */
  get maxProcesses(): number {
    return this.#maxProcesses;
  }

  /** How the number of a command's processes is bounded here (`none` says why it is not). */
  processLimit(): ProcessLimit {
    this.#processLimit ??= processLimitFor(this.#bwrapPath);
    return this.#processLimit;
  }

  /** The mounts a command started now gets (the disk is looked at again for each command). */
  mounts(): MountOp[] {
    if (this.#view === undefined) {
      const system = Object.freeze({ entries: systemEntries(), hidden: unreadableSystemEntries() });
      this.#view = { system, effective: effectiveScope(this.#scope, system) };
    }
    return planMounts(this.#view.effective, this.#view.system, this.cwd);
  }

  /** The environment every command gets. */
  env(): Readonly<Record<string, string>> {
    return this.#env;
  }

  /** The full bwrap command line for `bash -c command` as the disk is now: program, then arguments. */
  commandLine(command: string): string[] {
    const limit = this.processLimit();
    return [this.#bwrapPath, ...this.#args(this.mounts(), command, limit, limit.kind === "cgroup" ? 4 : undefined)];
  }

  /**
   * Runs `bash -c command` in the sandbox. Resolves when it and every process it started are
   * gone; throws `ABORTED` when `signal` aborted it, `SANDBOX_UNAVAILABLE` when bwrap cannot start.
   */
  run(command: string, options: SandboxRunOptions): Promise<CommandResult> {
    const { signal } = options;
    if (signal?.aborted === true) return Promise.reject(aborted(signal));
    const mounts = this.mounts();
    const limit = this.processLimit();
    let cgroup: CommandCgroup | undefined;
    if (limit.kind === "cgroup") {
      try {
        cgroup = CommandCgroup.create(limit.parent, this.#maxProcesses);
      } catch (error) {
        // Never a command without the bound this machine was found to have.
        return Promise.reject(
          new SandboxError(
            "SANDBOX_UNAVAILABLE",
            `the pids cgroup that bounds the command's processes could not be made in ${limit.parent}: ${(error as Error).message}`,
            { cause: error },
          ),
        );
      }
    }
    // With a cgroup, the sandbox waits on descriptor 4 until its first process has joined it.
    const blockFd = cgroup === undefined ? undefined : 4;
    const empties = emptyFdCount(mounts);
    const emptyFd = empties > 0 ? openSync("/dev/null", "r") : undefined;
    return new Promise<CommandResult>((resolve, reject) => {
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(this.#bwrapPath, this.#args(mounts, command, limit, blockFd), {
          stdio: [
            "ignore",
            "pipe",
            "pipe",
            "pipe",
            ...(blockFd === undefined ? [] : ["pipe" as const]),
            ...new Array<number>(empties).fill(emptyFd ?? -1),
          ],
          env: { PATH: this.#env["PATH"] ?? DEFAULT_PATH },
        });
      } catch (error) {
        void cgroup?.remove();
        throw error;
      } finally {
        if (emptyFd !== undefined) closeSync(emptyFd);
      }
      const stdout = new OutputCapture(options.maxOutputBytes);
      const stderr = new OutputCapture(options.maxOutputBytes);
      child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
      child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));

      // bwrap reports the sandbox's first process; killing it makes the kernel kill every
      // process of the sandbox's PID namespace before bwrap itself exits.
      let sandboxPid: number | undefined;
      let info = "";
      const infoStream = child.stdio[3] as NodeJS.ReadableStream;
      infoStream.setEncoding("utf8");
      infoStream.on("data", (text: string) => {
        info += text;
        const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
        if (match !== null && sandboxPid === undefined) {
          sandboxPid = Number(match[1]);
          if (cgroup !== undefined && !killed) {
            try {
              cgroup.join(sandboxPid);
              (child.stdio[blockFd!] as NodeJS.WritableStream).end("x");
            } catch (error) {
              limitError = error as Error;
              kill();
            }
          }
          if (killed) kill();
        }
      });
      infoStream.on("error", () => undefined);
      if (blockFd !== undefined) (child.stdio[blockFd] as NodeJS.WritableStream).on("error", () => undefined);

      let exited = false;
      let killed = false;
      let limitError: Error | undefined;
      let timedOut = false;
      const kill = (): void => {
        killed = true;
        if (exited) return;
        try {
          if (sandboxPid !== undefined) process.kill(sandboxPid, "SIGKILL");
          else child.kill("SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, options.timeoutMs);
      const onAbort = (): void => kill();
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      child.on("exit", () => {
        exited = true;
      });
      child.on("error", (error) => {
        exited = true;
        done();
        void cgroup?.remove();
        reject(
          new SandboxError(
            "SANDBOX_UNAVAILABLE",
            `bubblewrap (${this.#bwrapPath}) could not be started: ${error.message}`,
            {
              cause: error,
            },
          ),
        );
      });
      child.on("close", (code) => {
        exited = true;
        done();
        // Not waited for: the kernel may take a moment to free the last processes.
        void cgroup?.remove();
        if (limitError !== undefined) {
          reject(
            new SandboxError(
              "SANDBOX_UNAVAILABLE",
              `the command was not run: its sandbox could not join the pids cgroup that bounds its processes (${limitError.message})`,
              { cause: limitError },
            ),
          );
          return;
        }
        if (signal?.aborted === true && !timedOut) {
          reject(aborted(signal));
          return;
        }
        resolve({
          exitCode: killed ? null : code,
          timedOut,
          stdout: stdout.result("stdout"),
          stderr: stderr.result("stderr"),
        });
      });
    });
  }

  #args(mounts: readonly MountOp[], command: string, limit: ProcessLimit, blockFd?: number): string[] {
    return bwrapArgs(mounts, commandArgv(command, limit, this.#maxProcesses), {
      network: this.network,
      env: this.#env,
      cwd: this.cwd,
      infoFd: 3,
      blockFd,
      firstEmptyFd: blockFd === undefined ? 4 : blockFd + 1,
    });
  }
}

/**
 * `bash -c command`; with the `rlimit` bound, first a bash that lowers RLIMIT_NPROC (soft and
 * hard, so it cannot be raised again) inside the sandbox's user namespace, where it counts only
 * that namespace's processes, then runs exactly `bash -c command`. A hard limit already below
 * `max` cannot be raised to it and is a tighter bound already; only an unlimited one that could
 * not be lowered stops the command.
 */
function commandArgv(command: string, limit: ProcessLimit, max: number): string[] {
  if (limit.kind !== "rlimit") return ["bash", "-c", command];
  const bound = `{ ulimit -u ${max} 2>/dev/null || [ "$(ulimit -H -u)" != unlimited ]; }`;
  return ["bash", "-c", `${bound} && exec bash -c "$1"`, "bash", command];
}

function aborted(signal: AbortSignal): SandboxError {
  return new SandboxError(
    "ABORTED",
    "run_command was interrupted; the command and every process it started were stopped",
    { cause: signal.reason },
  );
}
