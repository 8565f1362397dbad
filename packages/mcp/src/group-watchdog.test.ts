import { spawn } from "node:child_process";
import { describe, expect, test } from "vitest";
import { isRunning, survivors } from "./__fixtures__/servers.ts";
import { GroupWatchdog } from "./group-watchdog.ts";

// The fallback guard (where bash is missing): a detached group, killed when the watchdog's input ends.
describe("GroupWatchdog", () => {
  test.runIf(process.platform !== "win32")("ending_its_input_kills_the_whole_guarded_group", async () => {
    const watchdog = GroupWatchdog.start();
    // A leader with a child of its own in its group, as a server with a grandchild.
    const leader = spawn("sh", ["-c", "sleep 600 & echo $!; wait"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    const childPid = await new Promise<number>((resolve) =>
      leader.stdout.once("data", (d) => resolve(Number(String(d)))),
    );
    watchdog.guard(leader.pid!);
    expect([isRunning(leader.pid!), isRunning(childPid)]).toEqual([true, true]);
    // What the kernel does when `pod` dies: the pipe closes.
    watchdog.release();
    expect(await survivors([leader.pid!, childPid])).toEqual([]);
  });
});
