/** One stream of a command as kept: its start and end, and how much was left out between them. */
export interface CapturedOutput {
  /** The kept text: the first and last bytes, with a note where the middle was left out. */
  readonly text: string;
  /** Bytes the command wrote to the stream. */
  readonly totalBytes: number;
  /** Bytes left out of `text`. */
  readonly omittedBytes: number;
}

/**
 * Keeps the first and last `maxBytes / 2` bytes of a stream and counts the rest, so memory
 * stays flat however much a command writes (the end of a build log is where its error is).
 */
export class OutputCapture {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(maxBytes: number) {
    this.#headLimit = Math.ceil(maxBytes / 2);
    this.#tailLimit = Math.floor(maxBytes / 2);
  }

  /** Takes the next chunk of the stream. */
  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headLimit) {
      const take = Math.min(rest.length, this.#headLimit - this.#headBytes);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.#tailLimit === 0) return;
    // A view, not a copy: the few chunks the tail holds are kept alive, the rest are dropped.
    this.#tail.push(rest.subarray(Math.max(0, rest.length - this.#tailLimit)));
    this.#tailBytes += Math.min(rest.length, this.#tailLimit);
    while (this.#tailBytes - (this.#tail[0]?.length ?? 0) >= this.#tailLimit) {
      this.#tailBytes -= this.#tail.shift()!.length;
    }
  }

  /** The stream as kept; `name` (e.g. `stdout`) is used in the note. */
  result(name: string): CapturedOutput {
    const head = Buffer.concat(this.#head);
    let tail = Buffer.concat(this.#tail);
    if (tail.length > this.#tailLimit) tail = tail.subarray(tail.length - this.#tailLimit);
    const omitted = this.#total - head.length - tail.length;
    if (omitted === 0) return { text: decode(Buffer.concat([head, tail])), totalBytes: this.#total, omittedBytes: 0 };
    const note = `\n[... ${omitted} bytes of ${name} left out here (${this.#total} bytes in all); write it to a file and read parts of it, or filter it (grep, head, tail) ...]\n`;
    return { text: `${decode(head)}${note}${decode(tail)}`, totalBytes: this.#total, omittedBytes: omitted };
  }
}

function decode(bytes: Buffer): string {
  // A character cut at the edge of what is kept shows as U+FFFD, never as a broken string.
  return bytes.toString("utf8");
}
