import type { ChildProcess } from "node:child_process";

// Every live server process group, so the last moments of `pod` can still end them.
const live = new Set<number>();
let hooked = false;

/** Sends `signal` to the whole process group led by `pid`; false when it is gone already. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    // Just spawned, the leader may not have made its group yet: signal it alone.
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Tracks a child started as a process-group leader until it exits; when this process exits
 * first (a crash included: the exit event still runs), the whole group is killed.
 */
export function trackGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const group of live) signalGroup(group, "SIGKILL");
    });
  }
  live.add(pid);
  child.once("exit", () => {
    // The leader is gone; whatever it started may still run in its group.
    signalGroup(pid, "SIGKILL");
    live.delete(pid);
  });
}

/** How many tracked server process groups are still running (for tests and `pod check`). */
export function liveGroupCount(): number {
  return live.size;
}
