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
 * Tracks a running server process group until `untrack` is called; when this process exits
 * first (a crash included: the exit event still runs), the whole group is killed.
 */
export function trackGroup(group: number): () => void {
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const tracked of live) signalGroup(tracked, "SIGKILL");
    });
  }
  live.add(group);
  return () => {
    live.delete(group);
  };
}

/** How many tracked server process groups are still running (for tests and `pod check`). */
export function liveGroupCount(): number {
  return live.size;
}
