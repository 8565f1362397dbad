import { type ChildProcess, spawn } from "node:child_process";

/**
 * The watchdog's script: it ignores the signals a terminal or a supervisor sends to `pod`'s
 * group, reads the group id to guard, then waits for end of input, which comes when `pod`
 * ends it or when `pod` is gone (killed by SIGKILL included, the kernel closes the pipe),
 * and kills that whole process group.
 */
const SCRIPT = [
  "trap '' INT TERM HUP QUIT",
  "read -r group || exit 0",
  'case $group in ""|*[!0-9]*) exit 0 ;; esac',
  "while read -r _; do :; done",
  // Not `kill -KILL -- -N`: dash's kill takes no `--`.
  'kill -KILL "-$group" 2>/dev/null',
  "exit 0",
].join("\n");

/**
 * A small `sh` process, in a session of its own, that kills one process group when `pod` lets
 * go of it or dies. A process cannot outlive a SIGKILL of its parent by any code of the parent,
 * so the guard has to be another process; it is started before the group it guards, so no
 * moment exists in which the group runs unguarded.
 */
export class GroupWatchdog {
  readonly #child: ChildProcess | undefined;
  #released = false;

  private constructor(child: ChildProcess | undefined) {
    this.#child = child;
  }

  /** Starts a watchdog; without `sh` (Windows) there is none and guarding does nothing. */
  static start(): GroupWatchdog {
    if (process.platform === "win32") return new GroupWatchdog(undefined);
    let child: ChildProcess;
    try {
      child = spawn("/bin/sh", ["-c", SCRIPT], { stdio: ["pipe", "ignore", "ignore"], detached: true });
    } catch {
      return new GroupWatchdog(undefined);
    }
    child.on("error", () => undefined);
    child.stdin?.on("error", () => undefined);
    // Neither the watchdog nor its pipe may keep `pod` running.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return new GroupWatchdog(child);
  }

  /** Names the group to kill when `pod` goes (its leader's pid). */
  guard(pgid: number): void {
    if (this.#released) return;
    this.#child?.stdin?.write(`${pgid}\n`);
  }

  /** Ends the watchdog; it kills what is left of the group as it goes. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#child?.stdin?.end();
  }
}
