import { readFileSync } from "node:fs";
import { type FileHandle, link, open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { SegmentStoreError, segmentIoError, systemErrorCode } from "./segment-store-error.ts";
import type { SegmentWarning } from "./segment-store.ts";
import { randomToken } from "./segment-token.ts";

/*
 * Lock file `<id>.lock`: `<pid>\n<hostname>\n<token>\n<process id>\n`, created whole in one
 * step (written to `<id>.lock.<token>.tmp`, then hard-linked into place, which fails with
 * EEXIST when a lock is there). So a lock file always has its content from the first moment
 * it exists, and an empty or unparsable one can only be debris of a crash (or of a copy of
 * this package before issue 16, which wrote it in two steps). The token is a random version 4
 * UUID (segment-token.ts); readers only split the lines and compare whole contents.
 *
 * The temp file is written through one handle (open `wx`, write, then close and link at once:
 * the link needs the written bytes, not the closed handle), and its name is removed while the
 * caller goes on (`cleanup`), so taking a lock costs three thread-pool round trips, not five.
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
    return systemErrorCode(error) === "ESRCH"
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
    {
      file,
      lock: {
        ...(holder?.pid === undefined ? {} : { pid: holder.pid }),
        ...(holder?.host === undefined ? {} : { host: holder.host }),
      },
    },
  );
}

async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    return parseHolder(await readFile(file, "utf8"));
  } catch (error) {
    if (systemErrorCode(error) === "ENOENT") return undefined;
    throw segmentIoError(file, "read the lock file", error);
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
): Promise<{ lock: SegmentLock; warnings: SegmentWarning[]; cleanup: Promise<void> }> {
  const token = randomToken();
  const content = `${process.pid}\n${hostname()}\n${token}\n${processId()}\n`;
  const cleanups: Promise<void>[] = [];
  let warnings: SegmentWarning[];
  try {
    warnings = await createLockFile(file, segmentId, content, token, cleanups);
  } catch (error) {
    await Promise.all(cleanups);
    throw error;
  }
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
        if (systemErrorCode(error) !== "ENOENT") throw segmentIoError(file, "remove the lock file", error);
      }
    },
  };
  // Resolves (never rejects) once the temp names are gone: the caller waits for it before it
  // reports the segment created, so no temp file is left visible, but not before its next step.
  return { lock, warnings, cleanup: Promise.all(cleanups).then(() => undefined) };
}

/** Writes `content` to the new file `temp` (exclusive create); the open handle, to be closed. */
async function writeTemp(temp: string, content: string): Promise<FileHandle> {
  const handle = await open(temp, "wx");
  try {
    const bytes = Buffer.from(content, "utf8");
    const { bytesWritten } = await handle.write(bytes, 0, bytes.length, 0);
    if (bytesWritten !== bytes.length) throw new Error(`short write (${bytesWritten} of ${bytes.length} bytes)`);
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Puts `content` at `file` in one step; false when a lock file is already there. Pushes the
 * removal of the temp name onto `cleanups` (a promise that never rejects) instead of waiting.
 */
async function placeLockFile(
  file: string,
  content: string,
  token: string,
  cleanups: Promise<void>[],
): Promise<boolean> {
  const temp = `${file}.${token}.tmp`;
  let handle: FileHandle;
  try {
    handle = await writeTemp(temp, content);
  } catch (error) {
    if (systemErrorCode(error) !== "EEXIST") await unlink(temp).catch(() => undefined);
    throw segmentIoError(file, "create the lock file", error);
  }
  const [closed, linked] = await Promise.allSettled([handle.close(), link(temp, file)]);
  const removed = unlink(temp).catch(() => undefined);
  if (closed.status === "rejected") {
    // The bytes were written, but report the failure as writeFile would have, and take back
    // the lock this call just linked into place (its content is ours, nobody else's).
    if (linked.status === "fulfilled") await unlink(file).catch(() => undefined);
    await removed;
    throw segmentIoError(file, "create the lock file", closed.reason);
  }
  if (linked.status === "fulfilled") {
    cleanups.push(removed);
    return true;
  }
  // Every other way on reuses the temp name or reports an error: the name is gone first.
  await removed;
  const code = systemErrorCode(linked.reason);
  if (code === "EEXIST") return false;
  if (!LINK_UNSUPPORTED.has(code ?? "")) throw segmentIoError(file, "create the lock file", linked.reason);
  // No hard links here (some network and FUSE file systems): exclusive create, then write.
  try {
    await writeFile(file, content, { flag: "wx" });
    return true;
  } catch (error) {
    if (systemErrorCode(error) === "EEXIST") return false;
    throw segmentIoError(file, "create the lock file", error);
  }
}

async function createLockFile(
  file: string,
  segmentId: string,
  content: string,
  token: string,
  cleanups: Promise<void>[],
): Promise<SegmentWarning[]> {
  const warnings: SegmentWarning[] = [];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (await placeLockFile(file, content, token, cleanups)) return warnings;
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
      if (systemErrorCode(error) === "ENOENT") continue;
      throw segmentIoError(file, "take over the stale lock file", error);
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
