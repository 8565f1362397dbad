import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Absolute paths of the fixture servers (also used by the CLI's tests). */
export const FIXTURES = {
  stdio: join(import.meta.dirname, "stdio-server.mjs"),
  hang: join(import.meta.dirname, "hang-server.mjs"),
  http: join(import.meta.dirname, "http-server.mjs"),
};

/** A file the fixture servers append `<pid> <child pid>` lines to. */
export function pidFile(): string {
  return join(mkdtempSync(join(tmpdir(), "insomnia-mcp-")), "pids");
}

/** Every pid written to a pid file so far. */
export function pidsIn(file: string): number[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split(/\s+/)
    .filter((word) => word !== "")
    .map(Number);
}

/** True while a process with this pid exists (and is not a zombie). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Waits (polling) until none of the pids runs; returns those still running. The bound is long
 * for a loaded machine, yet inside the test timeout so the survivors are what a failure shows.
 */
export async function survivors(pids: readonly number[], waitMs = 15_000): Promise<number[]> {
  const until = Date.now() + waitMs;
  for (;;) {
    const running = pids.filter(isRunning);
    if (running.length === 0 || Date.now() > until) return running;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Starts the HTTP fixture server; resolves with its URL and a stop function. */
export async function startHttpFixture(env: Record<string, string> = {}): Promise<{ url: string; stop(): void }> {
  const child: ChildProcess = spawn(process.execPath, [FIXTURES.http], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the HTTP fixture exited (${code})`)));
  });
  return { url, stop: () => child.kill("SIGKILL") };
}
