import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable } from "node:stream";
import { GroupWatchdog } from "./group-watchdog.ts";

/** A server started as the leader of a process group of its own, guarded so it cannot outlive `pod`. */
export interface GroupLaunch {
  /** The process whose stdin, stdout and stderr are the server's. */
  readonly child: ChildProcess;
  /** The server's process group id, once known (rejects when the server did not start). */
  readonly group: Promise<number>;
  /** Ends the guard once the group has been killed: nothing of it is left to guard. */
  release(): void;
}

// bash puts a background job in a process group of its own with `set -m`, also without a
// terminal, inside the caller's session. A new session (Node's `detached`) is a new scheduler
// autogroup on Linux, and each round trip to the server then waited longer on a loaded machine
// (bench/RESULTS.md, "Figures moved out of code comments"). bash stays as the server's guard:
// it ignores the signals a terminal or a supervisor sends to `pod`'s group, writes the group
// id on descriptor 3 and reads it until end of input, which comes when `pod` ends it or is
// gone (killed by SIGKILL included: the kernel closes it); then it kills the whole group.
const BASH = ["/bin/bash", "/usr/bin/bash"].find((path) => process.platform !== "win32" && existsSync(path));
const LAUNCH = [
  "trap '' INT TERM HUP QUIT",
  "set -m",
  '( trap - INT TERM HUP QUIT; exec "$@" ) 3<&- &',
  "group=$!",
  "exec 0</dev/null 1>/dev/null 2>/dev/null",
  "printf '%s\\n' \"$group\" >&3",
  "while read -r _ <&3; do :; done",
  'kill -KILL "-$group"',
].join("\n");

/**
 * Starts `command` as the leader of its own process group: under a bash guard where bash is
 * installed, else with Node's `detached` (a new session) plus a {@link GroupWatchdog}.
 */
export function launchInGroup(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): GroupLaunch {
  if (BASH !== undefined) return underBash(BASH, command, args, options);
  return detachedWithWatchdog(command, args, options);
}

function underBash(
  bash: string,
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): GroupLaunch {
  // --norc: with its input on a socket (Node's pipes), bash would otherwise run ~/.bashrc as if
  // started by sshd, and whatever that prints would go into the server's protocol stream.
  const child = spawn(bash, ["--norc", "--noprofile", "-c", LAUNCH, "bash", command, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
    windowsHide: true,
  });
  const guard = child.stdio[3] as Readable & { end(): void };
  guard.on("error", () => undefined);
  const group = new Promise<number>((resolve, reject) => {
    let text = "";
    guard.setEncoding("utf8");
    const onData = (chunk: string): void => {
      text += chunk;
      const line = /^(\d+)\n/.exec(text);
      if (line === null) return;
      guard.off("data", onData);
      resolve(Number(line[1]));
    };
    guard.on("data", onData);
    child.once("error", reject);
    child.once("exit", () => reject(new Error("the server's process group could not be made")));
  });
  group.catch(() => undefined);
  return { child, group, release: () => guard.end() };
}

function detachedWithWatchdog(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): GroupLaunch {
  // Started first, so the server's group is guarded from the moment it exists.
  const watchdog = GroupWatchdog.start();
  let child: ChildProcess;
  try {
    child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
      windowsHide: true,
    });
  } catch (error) {
    watchdog.release();
    throw error;
  }
  if (child.pid !== undefined) watchdog.guard(child.pid);
  const group = new Promise<number>((resolve, reject) => {
    child.once("spawn", () => resolve(child.pid!));
    child.once("error", (error) => {
      watchdog.release();
      reject(error);
    });
  });
  group.catch(() => undefined);
  return { child, group, release: () => watchdog.release() };
}
