import { readFileSync } from "node:fs";
import { type FileHandle, link, open, readFile, rename, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { makePrivateDirectory, PRIVATE_FILE, privateFileMode } from "./private-files.ts";
import { SegmentStoreError, segmentIoError, systemErrorCode } from "./segment-store-error.ts";
import type { SegmentWarning } from "./segment-store.ts";

/*
 * One writer per pod: the lock file `pod.lock` in the pod's directory,
 * `<pid>\n<hostname>\n<token>\n<process id>\n`, the token a random UUID. It never exists
 * without its content: it is written to `pod.lock.<pid>.<token>.tmp` first and then
 * hard-linked into place, which fails with EEXIST while a lock is there.
 *
 * Taking over a stale lock never leaves an instant without one, and only one process can do
 * it for one stale lock: the taker claims that lock by linking its temp file to
 * `pod.lock.takeover-<hash of the stale content>-<level>` (exclusive: one claimant per name),
 * checks that `pod.lock` still has the stale content, and renames its temp file over it.
 * Nobody else can change `pod.lock` in between: a fresh lock cannot be linked while it
 * exists, its dead holder cannot release it, and another taker of the same stale lock needs
 * the same claim, or the next level's, which is taken only when the claimant of every lower
 * level no longer runs. Claims of a lock that was replaced are inert (the check fails) and
 * are removed by the next holder with the rest of the debris.
 *
 * Whether the holder still runs:
 * - another host: assumed alive (we cannot tell);
 * - this process (same pid and same process id): alive — another store instance, another
 *   thread, or a loaded copy of this package holds it. The process id is the same in every
 *   worker_thread, so no registry shared between threads is needed;
 * - same pid, different process id: an earlier process whose pid was reused (a restarted
 *   container is pid 1 again): stale;
 * - another pid: stale when it no longer exists (ESRCH), or when the kernel says that pid
 *   started at another time than the holder (Linux: reused pid).
 */

/** The pod's writer lock, held until released. */
export interface PodWriterFileLock {
  readonly file: string;
  /** The random id of this lock instance (the lock file's third line). */
  readonly token: string;
  /** {@link contentId} of this lock's content: the name part of claims on it. */
  readonly contentId: string;
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
/** How many claim levels (each one a dead claimant) a takeover goes through before it gives up. */
const CLAIM_LEVELS = 8;
/** How often the lock changes hands under one acquire before it reports SEGMENT_LOCKED. */
const ATTEMPTS = 8;

/** Name of the lock file in a pod's directory. */
export const POD_LOCK_NAME = "pod.lock";

/** `pod.lock.<pid>.<token>.tmp`: the temp file of one acquire; debris once that pid runs no more. */
export const LOCK_TEMP: RegExp = /^pod\.lock\.([0-9]+)\.[0-9a-f-]+\.tmp$/;
/** `pod.lock.takeover-<id>-<level>`: a claim on one stale lock. */
export const LOCK_CLAIM: RegExp = /^pod\.lock\.takeover-([0-9a-f]+)-[0-9]+$/;

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

/** True when process `pid` of this host certainly runs no more. */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return systemErrorCode(error) === "ESRCH";
  }
}

/** The name part that identifies one lock file's content in its claims. */
export function contentId(raw: string): string {
  // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
  return process.getBuiltinModule("node:crypto").createHash("sha256").update(raw).digest("hex").slice(0, 32);
}

function lockedError(file: string, holder: LockHolder | undefined, claimant = false): SegmentStoreError {
  const who =
    holder?.pid === undefined
      ? "another writer"
      : holder.pid === process.pid && holder.host === hostname()
        ? `process ${holder.pid} (this process: another store instance, thread or pod)`
        : `process ${holder.pid}${holder.host === undefined ? "" : ` on ${holder.host}`}`;
  const what = claimant ? `is being taken over by ${who}` : `is being written by ${who}`;
  return new SegmentStoreError(
    "SEGMENT_LOCKED",
    `the pod in ${dirname(file)} ${what}; only one process may write a pod at a time. ` +
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

async function readRaw(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if (systemErrorCode(error) === "ENOENT") return undefined;
    throw segmentIoError(file, "read the lock file", error);
  }
}

/** Writes `content` to the new file `temp` (exclusive create, mode 0600). */
async function writeTemp(temp: string, content: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, "wx", PRIVATE_FILE);
    await privateFileMode(handle);
    const bytes = Buffer.from(content, "utf8");
    const { bytesWritten } = await handle.write(bytes, 0, bytes.length, 0);
    if (bytesWritten !== bytes.length) throw new Error(`short write (${bytesWritten} of ${bytes.length} bytes)`);
  } finally {
    await handle?.close();
  }
}

/**
 * Gives the content of `temp` the new name `name` in one step; false when `name` exists.
 * Where hard links are refused (some network and FUSE file systems) the name is created
 * exclusively and then written, which a crash can leave empty: such debris counts as stale.
 */
async function linkNew(temp: string, name: string, content: string): Promise<boolean> {
  try {
    await link(temp, name);
    return true;
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === "EEXIST") return false;
    if (!LINK_UNSUPPORTED.has(code ?? "")) throw error;
  }
  let handle: FileHandle;
  try {
    handle = await open(name, "wx", PRIVATE_FILE);
  } catch (error) {
    if (systemErrorCode(error) === "EEXIST") return false;
    throw error;
  }
  try {
    await privateFileMode(handle);
    await handle.write(content, 0, "utf8");
  } finally {
    await handle.close();
  }
  return true;
}

type Takeover = "taken" | "changed";

/**
 * Takes the stale lock `holder` over (see the protocol above): "taken" when `file` is now
 * ours, "changed" when it no longer holds that content (look again).
 */
async function takeOver(file: string, temp: string, content: string, holder: LockHolder): Promise<Takeover> {
  const id = contentId(holder.raw);
  for (let level = 1; level <= CLAIM_LEVELS; level += 1) {
    const claim = `${file}.takeover-${id}-${level}`;
    if (await linkNew(temp, claim, content)) {
      if ((await readRaw(file)) !== holder.raw) {
        await unlink(claim).catch(() => undefined);
        return "changed";
      }
      try {
        await rename(temp, file);
      } finally {
        await unlink(claim).catch(() => undefined);
      }
      return "taken";
    }
    const raw = await readRaw(claim);
    if (raw === undefined) return "changed"; // removed by a holder that replaced the stale lock
    const claimant = parseHolder(raw);
    if (staleReason(claimant) === undefined) throw lockedError(file, claimant, true);
  }
  throw lockedError(file, holder, true);
}

/**
 * Takes the pod's writer lock `file`, creating its directory (0700) when missing. A lock
 * whose holder certainly runs no more (or an empty or unreadable one) is taken over with a
 * `SEGMENT_LOCK_STALE` warning; any other existing lock is a SegmentStoreError `SEGMENT_LOCKED`.
 */
export async function acquirePodWriterLock(
  file: string,
): Promise<{ lock: PodWriterFileLock; warnings: SegmentWarning[] }> {
  // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
  const token = process.getBuiltinModule("node:crypto").randomUUID();
  const content = `${process.pid}\n${hostname()}\n${token}\n${processId()}\n`;
  const temp = `${file}.${process.pid}.${token}.tmp`;
  try {
    await writeTemp(temp, content);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === "ENOTDIR") throw segmentIoError(dirname(file), "create the segment directory", error);
    if (code !== "ENOENT") throw segmentIoError(file, "create the lock file", error);
    await makePrivateDirectory(dirname(file));
    try {
      await writeTemp(temp, content);
    } catch (again) {
      throw segmentIoError(file, "create the lock file", again);
    }
  }
  const warnings: SegmentWarning[] = [];
  try {
    await placeLock(file, temp, content, warnings);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  let released = false;
  const lock: PodWriterFileLock = {
    file,
    token,
    contentId: contentId(content),
    async release() {
      if (released) return;
      released = true;
      // Nobody else changes a live holder's lock, so reading and then removing it is safe.
      if ((await readRaw(file).catch(() => undefined)) !== content) return;
      try {
        await unlink(file);
      } catch (error) {
        if (systemErrorCode(error) !== "ENOENT") throw segmentIoError(file, "remove the lock file", error);
      }
    },
  };
  return { lock, warnings };
}

async function placeLock(file: string, temp: string, content: string, warnings: SegmentWarning[]): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    try {
      if (await linkNew(temp, file, content)) return;
    } catch (error) {
      throw segmentIoError(file, "create the lock file", error);
    }
    const raw = await readRaw(file);
    if (raw === undefined) continue;
    const holder = parseHolder(raw);
    const reason = staleReason(holder);
    if (reason === undefined) throw lockedError(file, holder);
    let outcome: Takeover;
    try {
      outcome = await takeOver(file, temp, content, holder);
    } catch (error) {
      if (SegmentStoreError.is(error)) throw error;
      throw segmentIoError(file, "take over the stale lock file", error);
    }
    if (outcome === "taken") {
      warnings.push({
        code: "SEGMENT_LOCK_STALE",
        message: `${file}: took over the writer lock of the pod: ${reason}`,
        file,
      });
      return;
    }
  }
  throw lockedError(file, parseHolder((await readRaw(file)) ?? ""));
}
