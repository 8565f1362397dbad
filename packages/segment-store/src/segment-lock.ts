import { readFileSync } from "node:fs";
import { link, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { SegmentStoreError } from "./segment-store-error.ts";
import type { SegmentWarning } from "./segment-store.ts";

/*
 * Lock file `<id>.lock`: `<pid>\n<hostname>\n<token>\n<process id>\n`, created whole in one
 * step (written to `<id>.lock.<token>.tmp`, then hard-linked into place, which fails with
 * EEXIST when a lock is there). So a lock file always has its content from the first moment
 * it exists, and an empty or unparsable one can only be debris of a crash (or of a copy of
 * this package before issue 16, which wrote it in two steps).
 *
 * Whether the holder still runs:
 * - another host: assumed alive (we cannot tell);
 * - this process (same pid and same process id): alive — one of this process's threads, or a
 *   loaded copy of this package, holds it. The process id is the same in every worker_thread,
 *   so no registry shared between threads is needed (there is no such thing on globalThis);
 * - same pid, different process id: an earlier process whose pid was reused (a restarted
 *   container is pid 1 again): stale;
 * - another pid: stale when it no longer exists (ESRCH), or when the kernel says that pid
 *   started at another time than the holder (Linux: reused pid).
 */

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
  readonly process?: string;
}

const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);

/** Start time (clock ticks since boot) of a Linux process, or undefined where /proc cannot say. */
function linuxStartTime(pid: number | "self"): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // Field 22 (starttime), counted after the `(comm)` field, which may itself hold spaces.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

function linuxBootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim() || undefined;
  } catch {
    return undefined;
  }
}

let thisProcessId: string | undefined;

/**
 * One string per running process, the same in every thread and every loaded copy of this
 * package: the kernel's boot id and start time of the process on Linux, else Node's process
 * time origin (`performance.timeOrigin`, shared by all worker_threads of a process).
 * Computed once per thread: it never changes while the process runs.
 */
function processId(): string {
  if (thisProcessId === undefined) {
    const boot = linuxBootId();
    const started = boot === undefined ? undefined : linuxStartTime("self");
    thisProcessId =
      boot !== undefined && started !== undefined ? `linux:${boot}:${started}` : `node:${performance.timeOrigin}`;
  }
  return thisProcessId;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

function ioError(file: string, action: string, cause: unknown): SegmentStoreError {
  return new SegmentStoreError("SEGMENT_IO", `cannot ${action}: ${String(cause)}`, { file, cause });
}

function parseHolder(raw: string): LockHolder {
  const [pidText = "", host, token, process] = raw.split("\n");
  const pid = /^[1-9][0-9]{0,9}$/.test(pidText) ? Number(pidText) : undefined;
  return {
    raw,
    ...(pid === undefined ? {} : { pid }),
    ...(host ? { host } : {}),
    ...(token ? { token } : {}),
    ...(process ? { process } : {}),
  };
}

/** Why the holder certainly runs no more, or undefined when it may still run. */
function staleReason(holder: LockHolder): string | undefined {
  if (holder.pid === undefined) {
    return "the lock file was empty or unreadable, which only a crash while taking or releasing a lock leaves behind";
  }
  if (holder.host !== hostname()) return undefined;
  if (holder.pid === process.pid) {
    // Without a process id the lock predates them; it cannot be ours, which always have one.
    if (holder.process === processId()) return undefined;
    return `it was left by an earlier process with the same pid ${holder.pid}, which is no longer running`;
  }
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return errorCode(error) === "ESRCH"
      ? `it was left by process ${holder.pid} on ${holder.host}, which is no longer running`
      : undefined;
  }
  const [kind, boot, started] = (holder.process ?? "").split(":");
  if (kind === "linux" && boot === linuxBootId()) {
    const now = linuxStartTime(holder.pid);
    if (now !== undefined && started !== undefined && now !== started) {
      return `it was left by process ${holder.pid} on ${holder.host}, which is no longer running (that pid now belongs to another process)`;
    }
  }
  return undefined;
}

function lockedError(file: string, segmentId: string, holder: LockHolder | undefined): SegmentStoreError {
  const who =
    holder?.pid === undefined
      ? "another writer"
      : holder.pid === process.pid && holder.host === hostname()
        ? `process ${holder.pid} (this process: another thread, or another pod in this thread)`
        : `process ${holder.pid}${holder.host === undefined ? "" : ` on ${holder.host}`}`;
  return new SegmentStoreError(
    "SEGMENT_LOCKED",
    `segment ${segmentId} is locked by ${who}; only one writer may append to a segment. ` +
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
 * Takes the lock file `file` (see the format above). A lock whose holder certainly runs no
 * more, or an empty or unreadable one, is taken over with a `SEGMENT_LOCK_STALE` warning; any
 * other existing lock is a SegmentStoreError `SEGMENT_LOCKED`.
 */
export async function acquireSegmentLock(
  file: string,
  segmentId: string,
): Promise<{ lock: SegmentLock; warnings: SegmentWarning[] }> {
  const token = globalThis.crypto.randomUUID(); // the Web Crypto global: no node:crypto import at start-up
  const content = `${process.pid}\n${hostname()}\n${token}\n${processId()}\n`;
  const warnings = await createLockFile(file, segmentId, content, token);
  let released = false;
  const lock: SegmentLock = {
    file,
    async release() {
      if (released) return;
      released = true;
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

/** Puts `content` at `file` in one step; false when a lock file is already there. */
async function placeLockFile(file: string, content: string, token: string): Promise<boolean> {
  const temp = `${file}.${token}.tmp`;
  try {
    await writeFile(temp, content, { flag: "wx" });
  } catch (error) {
    throw ioError(file, "create the lock file", error);
  }
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") return false;
    if (!LINK_UNSUPPORTED.has(code ?? "")) throw ioError(file, "create the lock file", error);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  // No hard links here (some network and FUSE file systems): exclusive create, then write.
  try {
    await writeFile(file, content, { flag: "wx" });
    return true;
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw ioError(file, "create the lock file", error);
  }
}

async function createLockFile(
  file: string,
  segmentId: string,
  content: string,
  token: string,
): Promise<SegmentWarning[]> {
  const warnings: SegmentWarning[] = [];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (await placeLockFile(file, content, token)) return warnings;
    const holder = await readHolder(file);
    if (holder === undefined) continue;
    const reason = staleReason(holder);
    if (reason === undefined) throw lockedError(file, segmentId, holder);
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
      message: `${file}: took over the lock of segment ${segmentId}: ${reason}`,
      file,
    });
  }
  throw lockedError(file, segmentId, await readHolder(file));
}
