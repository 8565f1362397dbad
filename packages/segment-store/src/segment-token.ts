import { closeSync, openSync, readSync } from "node:fs";

/*
 * Tokens name one lock instance (the lock file's third line, its temp and "stale" file names)
 * and one segment temp file. They only have to be unique, never secret: the lock file also
 * holds the pid, the hostname and the process identity. Web Crypto (`globalThis.crypto`) would
 * do, but touching it loads node:crypto's Web Crypto layer at start-up, which a `pod run`
 * pays for before its first request; 16 bytes of the kernel's randomness cost one small
 * synchronous read (taken in batches of 32 tokens). Where there is no /dev/urandom (Windows),
 * Web Crypto is the source after all. The format stays a version 4 UUID, as the tokens of
 * earlier versions were, so a lock file looks the same to every version that reads it.
 */

const BATCH = 32;
let pool: Buffer | undefined;
let used = BATCH;
let urandom = process.platform !== "win32";

function refill(): Buffer | undefined {
  if (!urandom) return undefined;
  const bytes = Buffer.allocUnsafe(16 * BATCH);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      let length = 0;
      while (length < bytes.length) {
        const read = readSync(fd, bytes, length, bytes.length - length, null);
        if (read <= 0) throw new Error("/dev/urandom ended");
        length += read;
      }
    } finally {
      closeSync(fd);
    }
  } catch {
    urandom = false;
    return undefined;
  }
  return bytes;
}

/** A random version 4 UUID, e.g. `3f2b…-…`, without loading any crypto module where /dev/urandom exists. */
export function randomToken(): string {
  if (used === BATCH) {
    pool = refill();
    used = 0;
  }
  if (pool === undefined) return globalThis.crypto.randomUUID();
  const at = 16 * used;
  used += 1;
  const bytes = pool.subarray(at, at + 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40; // version 4
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80; // RFC 4122 variant
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
