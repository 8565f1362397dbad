import { readlinkSync, readSync } from "node:fs";

/**
 * Reads an open file to EOF, but never more than `maxBytes + 1` bytes: `undefined` when the
 * file holds more than `maxBytes` (a file that grew after its `fstat` included). `sizeHint`
 * (the `fstat` size) sizes the first buffer. Positional reads from 0.
 */
export function readCapped(fd: number, sizeHint: number, maxBytes: number): Uint8Array | undefined {
  let buffer = Buffer.alloc(Math.min(sizeHint, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) return undefined;
      const grown = Buffer.alloc(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const bytesRead = readSync(fd, buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > maxBytes ? undefined : buffer.subarray(0, length);
}

/**
 * Where an open descriptor really points (Linux `/proc/self/fd`), so that a directory swapped
 * for a symlink between `realpath` and `open` is caught; `undefined` where /proc is absent.
 */
export function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}
