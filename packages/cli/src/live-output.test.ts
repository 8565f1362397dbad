import { afterEach, describe, expect, test, vi } from "vitest";
import { liveOutput } from "./live-output.ts";
import type { CliIo } from "./io.ts";
import { styleFor } from "./output.ts";

afterEach(() => {
  vi.useRealTimers();
});

/** A terminal's stderr that keeps what was drawn on it. */
function terminal() {
  const written: string[] = [];
  const stream = { isTTY: true, write: (text: string) => written.push(text) > 0 };
  return { stream, written, line: () => written.at(-1) ?? "" };
}

describe("the status line of a retry", () => {
  test("counts_down_the_back_off_then_says_the_next_attempt_is_waiting_for_the_model", () => {
    vi.useFakeTimers({ now: 0 });
    const stderr = terminal();
    const io = { stdout: terminal().stream, stderr: stderr.stream, env: {}, cwd: "/" } as unknown as CliIo;
    const live = liveOutput(io, styleFor(io.stderr, {}), { model: "m", reasoning: false, maxAttempts: 3 });
    live.onEvent({ type: "model-call", iteration: 1 });
    expect(stderr.line()).toBe("\r\u001b[2Kwaiting for m 0s");
    live.onEvent({ type: "retry", attempt: 1, delayMs: 2000, code: "RATE_LIMITED" });
    expect(stderr.line()).toBe("\r\u001b[2Kretrying in 2s (2/3): RATE_LIMITED");
    vi.advanceTimersByTime(1000);
    expect(stderr.line()).toBe("\r\u001b[2Kretrying in 1s (2/3): RATE_LIMITED");
    vi.advanceTimersByTime(1000);
    expect(stderr.line()).toBe("\r\u001b[2Kwaiting for m 0s (2/3)");
    vi.advanceTimersByTime(3000);
    expect(stderr.line()).toBe("\r\u001b[2Kwaiting for m 3s (2/3)");
    live.finish();
    expect(stderr.line()).toBe("\r\u001b[2K");
  });
});
