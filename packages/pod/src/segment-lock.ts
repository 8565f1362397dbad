import { link, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { PodError } from "./pod-error.ts";
import type { SegmentWarning } from "./segment-store.ts";

/** An exclusive lock on one segment, held until released. */
export interface SegmentLock {
  readonly file: string;
  /** Removes the lock file if it is still this lock's. Idempotent. */
  release(): Promise<void>;
}

interface LockHolder {
  readonly raw: string;
  readonly pid?: number;
  readonly host?: string;
  readonly token?: string;
}

// Tokens of the locks this process holds, shared by every loaded copy of this package, so a
// lock file naming our own pid can be told apart from a stale one left by an earlier process.
const HELD_KEY = Symbol.for("insomnia.pod.segmentLocks");
function heldTokens(): Set<string> {
  const store = globalThis as unknown as Record<symbol, Set<string> | undefined>;
  let held = store[HELD_KEY];
  if (held === undefined) {
    held = new Set<string>();
    store[HELD_KEY] = held;
  }
  return held;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

function ioError(file: string, action: string, cause: unknown): PodError {
  return new PodError("SEGMENT_IO", `${file}: cannot ${action}: ${String(cause)}`, { file, cause });
}

function parseHolder(raw: string): LockHolder {
  const [pidText = "", host, token] = raw.split("\n");
  const pid = /^[1-9][0-9]{0,9}$/.test(pidText) ? Number(pidText) : undefined;
  return {
    raw,
    ...(pid === undefined ? {} : { pid }),
    ...(host ? { host } : {}),
    ...(token ? { token } : {}),
  };
}

/** True only when the holder certainly runs no more: same host, and its pid is gone. */
function isStale(holder: LockHolder): boolean {
  if (holder.pid === undefined || holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return holder.token === undefined || !heldTokens().has(holder.token);
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return errorCode(error) === "ESRCH";
  }
}

function lockedError(file: string, segmentId: string, holder: LockHolder | undefined): PodError {
  const who =
    holder?.pid === undefined
      ? "a writer that has not yet recorded its pid"
      : `process ${holder.pid}${holder.host === undefined ? "" : ` on ${holder.host}`}`;
  return new PodError(
    "SEGMENT_LOCKED",
    `${file}: segment ${segmentId} is locked by ${who}; only one writer may append to a segment. ` +
      `Close the other pod first; if no such process is running, delete ${file}.`,
    { file },
  );
}

async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    return parseHolder(await readFile(file, "utf8"));
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw ioError(file, "read the lock file", error);
  }
}

/**
 * Takes the lock file `file` (created with O_EXCL, holding `<pid>\n<hostname>\n<token>\n`).
 * A lock whose process is gone on this host is taken over with a `SEGMENT_LOCK_STALE` warning;
 * any other existing lock is a PodError `SEGMENT_LOCKED`.
 */
export async function acquireSegmentLock(
  file: string,
  segmentId: string,
): Promise<{ lock: SegmentLock; warnings: SegmentWarning[] }> {
  const token = globalThis.crypto.randomUUID(); // the Web Crypto global: no node:crypto import at start-up
  const content = `${process.pid}\n${hostname()}\n${token}\n`;
  // Registered before the file exists, so a concurrent acquirer in this process that reads
  // our pid never mistakes this lock for a stale one.
  heldTokens().add(token);
  let warnings: SegmentWarning[];
  try {
    warnings = await createLockFile(file, segmentId, content, token);
  } catch (error) {
    heldTokens().delete(token);
    throw error;
  }
  let released = false;
  const lock: SegmentLock = {
    file,
    async release() {
      if (released) return;
      released = true;
      heldTokens().delete(token);
      const current = await readFile(file, "utf8").catch(() => undefined);
      if (current !== content) return;
      try {
        await unlink(file);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") throw ioError(file, "remove the lock file", error);
      }
    },
  };
  return { lock, warnings };
}

async function createLockFile(
  file: string,
  segmentId: string,
  content: string,
  token: string,
): Promise<SegmentWarning[]> {
  const warnings: SegmentWarning[] = [];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    try {
      await writeFile(file, content, { flag: "wx" });
      return warnings;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw ioError(file, "create the lock file", error);
    }
    const holder = await readHolder(file);
    if (holder === undefined) continue;
    if (!isStale(holder)) throw lockedError(file, segmentId, holder);
    // Move the stale file aside first and re-check it, so two processes taking over the
    // same stale lock cannot both remove a fresh lock.
    const aside = `${file}.stale-${token}`;
    try {
      await rename(file, aside);
    } catch (error) {
      if (errorCode(error) === "ENOENT") continue;
      throw ioError(file, "take over the stale lock file", error);
    }
    const moved = await readFile(aside, "utf8").catch(() => undefined);
    if (moved !== holder.raw) {
      await link(aside, file).catch(() => undefined);
      await unlink(aside).catch(() => undefined);
      throw lockedError(file, segmentId, moved === undefined ? undefined : parseHolder(moved));
    }
    await unlink(aside).catch(() => undefined);
    warnings.push({
      code: "SEGMENT_LOCK_STALE",
      message: `${file}: took over the lock of segment ${segmentId} left by process ${holder.pid} on ${holder.host}, which is no longer running`,
      file,
    });
  }
  throw lockedError(file, segmentId, await readHolder(file));
}
