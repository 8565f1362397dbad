import { fstatSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import type { OutputStream } from "./output.ts";

/** Whether `fd` is a character device (a terminal, /dev/null); false when it cannot be told. */
function isCharacterDevice(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return false;
  }
}

/** Where output goes once the descriptor refuses a write: `process.stdout` or `process.stderr`. */
export interface FallbackStream {
  write(chunk: string | Uint8Array): unknown;
}

/**
 * The bin's stdout and stderr: text written straight to the file descriptor. `process.stdout`
 * on a pipe is a net.Socket, and creating it loads Node's stream and network modules, a
 * measurable part of a `pod prompt` (issue 15); a write here is one `writeSync`, done before
 * `write` returns, so nothing is lost when the process exits.
 *
 * - A descriptor in non-blocking mode (a parent may leave a pipe so) refuses a write with
 *   EAGAIN: the rest, and every later write, goes through `fallback()` (the process stream,
 *   which queues and flushes before exit).
 * - A reader that went away (EPIPE: `pod prompt | head -1`) ends the output: later writes are
 *   dropped, as a shell tool does, instead of failing the command.
 */
export class FdOutputStream implements OutputStream {
  readonly #fd: number;
  readonly #fallback: () => FallbackStream;
  #mode: "direct" | "fallback" | "closed" = "direct";
  #tty: boolean | undefined;

  constructor(fd: number, fallback: () => FallbackStream) {
    this.#fd = fd;
    this.#fallback = fallback;
  }

  /**
   * Asked only to pick colours. A terminal is a character device, so a pipe or a file is
   * answered from `fstat`; only a character device (a terminal, or /dev/null) asks node:tty,
   * which loads Node's network modules.
   */
  get isTTY(): boolean {
    this.#tty ??= isCharacterDevice(this.#fd)
      ? (createRequire(import.meta.url)("node:tty") as typeof import("node:tty")).isatty(this.#fd)
      : false;
    return this.#tty;
  }

  write(chunk: string): boolean {
    if (this.#mode === "closed") return false;
    if (this.#mode === "fallback") {
      this.#fallback().write(chunk);
      return true;
    }
    const bytes = Buffer.from(chunk, "utf8");
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(this.#fd, bytes, done, bytes.length - done);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EPIPE") {
        this.#mode = "closed";
        return false;
      }
      if (code !== "EAGAIN") throw error;
      this.#mode = "fallback";
      this.#fallback().write(bytes.subarray(done)); // bytes: a character may have been cut
    }
    return true;
  }
}
