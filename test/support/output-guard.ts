import { vi } from "vitest";

/**
 * Shared by the packages' hostile-input suites (imported by relative path, test-only, never
 * published): a library must never print, warn or leave a rejection unhandled.
 */

/** Records every write to stdout/stderr, console call and process warning while it is installed. */
function guardOutput(): { calls(): string[]; restore(): void } {
  const spies = [
    vi.spyOn(process.stdout, "write").mockName("stdout.write"),
    vi.spyOn(process.stderr, "write").mockName("stderr.write"),
    vi.spyOn(process, "emitWarning").mockName("process.emitWarning"),
    ...(["log", "info", "warn", "error", "debug", "trace"] as const).map((m) =>
      vi.spyOn(console, m).mockName(`console.${m}`),
    ),
  ];
  return {
    calls: () =>
      spies.flatMap((spy) => spy.mock.calls.map((args) => `${spy.getMockName()}: ${String(args[0]).slice(0, 200)}`)),
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}

/** Runs `body` with output spied on and unhandled rejections recorded; returns both. */
export async function guarded(body: () => Promise<void> | void): Promise<{ printed: string[]; rejections: unknown[] }> {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown): void => void rejections.push(reason);
  process.on("unhandledRejection", onRejection);
  const guard = guardOutput();
  let printed: string[];
  try {
    await body();
  } finally {
    printed = guard.calls();
    guard.restore();
    // Let any stray rejection surface before the listener goes.
    await new Promise((resolve) => setImmediate(resolve));
    process.off("unhandledRejection", onRejection);
  }
  return { printed, rejections };
}
