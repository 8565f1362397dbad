import type { OutputStream } from "./output.ts";

/** Erases the current terminal line and returns the cursor to its start. */
const ERASE = "\r\u001b[2K";

/**
 * One line on a terminal's stderr saying what `pod run` waits for ("waiting for <model> 3s",
 * "retrying in 4s (2/3): RATE_LIMITED"), redrawn each second and erased before anything else
 * is written. On a stream that is not a terminal it never writes a byte.
 */
export class StatusLine {
  readonly #stream: OutputStream;
  readonly #active: boolean;
  #render: (() => string) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #shown = false;

  constructor(stream: OutputStream) {
    this.#stream = stream;
    this.#active = stream.isTTY === true;
  }

  /** Shows `render()` now and again every second until {@link clear}. */
  show(render: () => string): void {
    if (!this.#active) return;
    this.#stop();
    this.#render = render;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), 1000);
    this.#timer.unref();
  }

  /** Erases the line (when one is shown) and stops redrawing it. */
  clear(): void {
    this.#stop();
    if (this.#shown) this.#stream.write(ERASE);
    this.#shown = false;
  }

  #draw(): void {
    if (this.#render === undefined) return;
    this.#stream.write(`${ERASE}${this.#render()}`);
    this.#shown = true;
  }

  #stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#render = undefined;
  }
}

/** Whole seconds since `start`, for the status line. */
export function secondsSince(start: number, now = Date.now()): number {
  return Math.max(0, Math.floor((now - start) / 1000));
}
