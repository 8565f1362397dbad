import { readlinkSync, readSync } from "node:fs";

/**
 * Reads an open regular file to its end, but never more than `maxBytes + 1` bytes: the first
 * `maxBytes` bytes, and whether the file holds more (`cut`; a file that grew after its `fstat`
 * included). `sizeHint` (the `fstat` size) sizes the first buffer. Positional reads from 0; a
 * short read that reaches the hint is the end, so a file that is as big as its hint takes one
 * read, and a file that reports no size (procfs) is read until a read gives nothing.
 */
export function readUpTo(fd: number, sizeHint: number, maxBytes: number): { bytes: Buffer; cut: boolean } {
  let buffer = Buffer.alloc(Math.min(sizeHint, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) break;
      const grown = Buffer.alloc(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const wanted = buffer.length - length;
    const bytesRead = readSync(fd, buffer, length, wanted, length);
    length += bytesRead;
    // The end: a read of nothing, or a short read once the file's `fstat` size is in. Only
    // then: files of /proc and some FUSE mounts report size 0 and give short reads before
    // their end.
    if (bytesRead === 0 || (bytesRead < wanted && sizeHint > 0 && length >= sizeHint)) break;
  }
  return length > maxBytes
    ? { bytes: buffer.subarray(0, maxBytes), cut: true }
    : { bytes: buffer.subarray(0, length), cut: false };
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
