import { link, open, readdir, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SegmentStoreError, segmentIoError, systemErrorCode } from "./segment-store-error.ts";
import { encodeSegmentLine, scanSegment, serializeSegmentRecord, type SegmentScan } from "./segment-codec.ts";
import { FileSegmentWriter } from "./segment-file-writer.ts";
import { compareSegmentIds, formatSegmentId, parseSegmentId } from "./segment-id.ts";
import {
  acquirePodWriterLock,
  LOCK_CLAIM,
  LOCK_TEMP,
  POD_LOCK_NAME,
  type PodWriterFileLock,
  processGone,
} from "./pod-writer-lock.ts";
import { PRIVATE_FILE, privateFileMode } from "./private-files.ts";
import { SharedPodLock } from "./shared-pod-lock.ts";
import type { SegmentStartRecord } from "./segment-record.ts";
import type {
  OpenSegmentOptions,
  OpenSegmentResult,
  PodWriterLock,
  ReadSegmentResult,
  SegmentStore,
  SegmentWarning,
  SegmentWriter,
} from "./segment-store.ts";

const SEGMENT_FILE = /^(seg-[0-9]{10,})\.jsonl$/;
const SEGMENT_ARTIFACT = /^(seg-[0-9]{10,})\.(?:jsonl|lock|jsonl\.tmp)(?:\..*)?$/;
/** A segment's temp file (`<id>.jsonl.<token>.tmp`, `<id>.jsonl.tmp` before issue 16): debris unless a create is running. */
const SEGMENT_TEMP = /^seg-[0-9]{10,}\.jsonl\.(?:.+\.)?tmp$/;
/** Per-segment lock files of versions before the pod lock (issue 27), with their temp and aside names. */
const LEGACY_SEGMENT_LOCK = /^seg-[0-9]{10,}\.lock(?:\..*)?$/;
const DIR_SYNC_UNSUPPORTED = new Set(["EISDIR", "EINVAL", "EPERM", "EBADF", "ENOTSUP", "EOPNOTSUPP"]);
const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);

/**
 * The whole content of a file just opened: one read of the size `stat` gives (`readFile` reads
 * in 512 KiB pieces, a round trip to the thread pool each: 40 for a 20 MiB segment), then reads
 * on until end of file, in case another process appended in between. Reads from the file's
 * position (not at offsets), so that anything `open` can read works, a pipe too.
 */
async function readWhole(handle: FileHandle): Promise<Buffer> {
  const { size } = await handle.stat();
  const first = Buffer.allocUnsafe(size);
  let length = 0;
  while (length < size) {
    const { bytesRead } = await handle.read(first, length, size - length, null);
    if (bytesRead === 0) return first.subarray(0, length);
    length += bytesRead;
  }
  const more: Buffer[] = [];
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    more.push(chunk.subarray(0, bytesRead));
    length += bytesRead;
  }
  return more.length === 0 ? first : Buffer.concat([first, ...more], length);
}

/** A directory opened ahead of its fsync: the handle, or why it could not be opened. */
type OpenedDirectory = { handle: FileHandle; error?: never } | { handle?: never; error: unknown };

/** Opens `dir` for a later {@link syncDirectory}; never rejects. */
function openDirectory(dir: string): Promise<OpenedDirectory> {
  return open(dir, "r").then(
    (handle) => ({ handle }),
    (error: unknown) => ({ error }),
  );
}

/** Closes a directory opened for an fsync that will not happen; never rejects. */
function discardDirectory(opened: Promise<OpenedDirectory>): Promise<void> {
  return opened.then(({ handle }) => handle?.close()).catch(() => undefined);
}

/**
 * Makes a new directory entry durable; skipped where directories cannot be fsynced. The
 * handle is closed after the fsync without waiting for it: nothing is written through it.
 */
async function syncDirectory(dir: string, opened: Promise<OpenedDirectory>): Promise<void> {
  const { handle, error } = await opened;
  try {
    if (handle === undefined) throw error;
    await handle.sync();
  } catch (error) {
    if (!DIR_SYNC_UNSUPPORTED.has(systemErrorCode(error) ?? ""))
      throw segmentIoError(dir, "fsync the directory", error);
  } finally {
    void handle?.close().catch(() => undefined);
  }
}

/** What writing a segment's temp file gave: its open handle, or the error. */
type WrittenTemp = { handle: FileHandle; error?: never } | { handle?: never; error: unknown };

/** Creates `temp`, writes `line` and fsyncs it; never rejects (a failure closes and says why). */
function writeTempSegment(temp: string, line: Buffer): Promise<WrittenTemp> {
  return (async (): Promise<WrittenTemp> => {
    let handle: FileHandle | undefined;
    try {
      handle = await open(temp, "wx", PRIVATE_FILE);
      await privateFileMode(handle);
      const { bytesWritten } = await handle.write(line, 0, line.length, 0);
      if (bytesWritten !== line.length) throw new Error(`short write (${bytesWritten} of ${line.length} bytes)`);
      await handle.sync();
      return { handle };
    } catch (error) {
      await handle?.close().catch(() => undefined);
      return { error };
    }
  })();
}

/** Closes and removes a temp segment file that will not be published; never rejects. */
async function discardTempSegment(temp: string, written: Promise<WrittenTemp>): Promise<void> {
  const { handle } = await written;
  await handle?.close().catch(() => undefined);
  await unlink(temp).catch(() => undefined);
}

/** One more than the highest counter of any segment's file (log, lock or temp) in `names`. */
function counterAfter(names: readonly string[]): number {
  let max = 0;
  for (const name of names) {
    const id = SEGMENT_ARTIFACT.exec(name)?.[1];
    const counter = id === undefined ? undefined : parseSegmentId(id);
    if (counter !== undefined && counter > max) max = counter;
  }
  return max + 1;
}

/**
 * The embedded segment store: one `<id>.jsonl` file per segment in `dir` (line format in
 * `segment-codec.ts`) and the pod's writer lock `pod.lock` (see `pod-writer-lock.ts`), held
 * while this instance has a writer open or a `lockPod()` unreleased. A segment file appears
 * (by hard link from `<id>.jsonl.<token>.tmp`) only once its start record is durable, so a
 * crash during `createSegment` leaves no half-made segment behind — an empty or start-less
 * segment file is therefore reported as `SEGMENT_CORRUPT`. Whoever takes the lock removes the
 * debris of killed writers (temp files, claims, old per-segment locks). Directories it creates
 * (parents too) are 0700, files 0600, whatever the umask.
 */
export class FileSegmentStore implements SegmentStore {
  /** Absolute directory holding the segment files. */
  readonly dir: string;
  readonly #podLock = new SharedPodLock(() => this.#acquire());
  /** The next segment counter, known while the pod lock is held (nobody else creates then). */
  #counter = 1;
  /** Segments this instance has a writer open on. */
  readonly #open = new Set<string>();

  /** A store in `dir` (created, with its missing parents, when the pod's writer lock is first taken). */
  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  /** Path of a segment's log file. */
  segmentFile(segmentId: string): string {
    return join(this.dir, `${segmentId}.jsonl`);
  }

  /** Path of the pod's writer lock file. */
  get podLockFile(): string {
    return join(this.dir, POD_LOCK_NAME);
  }

  lockPod(): Promise<PodWriterLock> {
    return this.#podLock.share();
  }

  /** Takes a share of the pod's writer lock (the first share takes the lock); its warnings go to the first taker. */
  async #enter(): Promise<SegmentWarning[]> {
    return (await this.#podLock.enter()).warnings;
  }

  #leave(): Promise<void> {
    return this.#podLock.leave();
  }

  async #acquire(): Promise<{ lock: PodWriterFileLock; warnings: SegmentWarning[] }> {
    const acquired = await acquirePodWriterLock(this.podLockFile);
    try {
      this.#counter = await this.#removeDebris(acquired.lock);
    } catch (error) {
      await acquired.lock.release().catch(() => undefined);
      throw error;
    }
    return acquired;
  }

  /**
   * Under the pod's lock nobody else creates a segment, so every segment temp file is debris of
   * a killed create; so are claims on replaced locks, lock temp files of processes that run no
   * more, and the per-segment lock files of earlier versions. Returns the next segment counter.
   */
  async #removeDebris(lock: PodWriterFileLock): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      throw segmentIoError(this.dir, "list the segment directory", error);
    }
    const debris = names.filter((name) => {
      if (SEGMENT_TEMP.test(name) || LEGACY_SEGMENT_LOCK.test(name)) return true;
      const claimed = LOCK_CLAIM.exec(name)?.[1];
      if (claimed !== undefined) return claimed !== lock.contentId;
      const pid = LOCK_TEMP.exec(name)?.[1];
      return pid !== undefined && Number(pid) !== process.pid && processGone(Number(pid));
    });
    await Promise.all(debris.map((name) => unlink(join(this.dir, name)).catch(() => undefined)));
    return counterAfter(names);
  }

  /*
   * A create under the pod's lock (taken first if this instance does not hold it): the start
   * record is written to a temp file of its own name and fsynced while the directory is
   * opened for its fsync; then the temp file is linked into place and the directory fsynced
   * while the temp name is removed. The segment file appears only once its start record is
   * durable, and the call resolves only after the directory fsync.
   */
  async createSegment(start: SegmentStartRecord): Promise<SegmentWriter> {
    const json = serializeSegmentRecord(start, "(new)", "segment_start");
    const line = encodeSegmentLine(0, json);
    await this.#enter();
    let counter = this.#counter;
    this.#counter += 1;
    const directory = openDirectory(this.dir);
    // node:crypto is loaded when first used, not with this module: `pod prompt` never needs it.
    const temp = `${this.segmentFile(formatSegmentId(counter))}.${process.getBuiltinModule("node:crypto").randomUUID()}.tmp`;
    const written = writeTempSegment(temp, line);
    let handle: FileHandle | undefined;
    let file = this.segmentFile(formatSegmentId(counter));
    try {
      const outcome = await written;
      if (outcome.handle === undefined) throw outcome.error;
      handle = outcome.handle;
      // An id taken by a writer that does not lock (or a hand-made file): the next id, same temp file.
      while (!(await this.#linkNew(temp, file))) {
        counter = Math.max(counter, this.#counter);
        this.#counter = counter + 1;
        file = this.segmentFile(formatSegmentId(counter));
      }
      const segmentId = formatSegmentId(counter);
      this.#open.add(segmentId);
      const removed = unlink(temp).catch(() => undefined);
      await Promise.all([syncDirectory(this.dir, directory), removed]);
      return new FileSegmentWriter(segmentId, file, handle, this.#release(segmentId), 1, line.length);
    } catch (error) {
      await Promise.all([
        handle === undefined ? discardTempSegment(temp, written) : handle.close().catch(() => undefined),
        unlink(temp).catch(() => undefined),
        discardDirectory(directory),
      ]);
      this.#open.delete(formatSegmentId(counter));
      await this.#leave();
      throw segmentIoError(file, "create the segment file", error);
    }
  }

  /** What a writer calls on close: its segment is free again in this instance, and its share of the pod lock given back. */
  #release(segmentId: string): { release(): Promise<void> } {
    let released: Promise<void> | undefined;
    return {
      release: () => {
        released ??= (async () => {
          this.#open.delete(segmentId);
          await this.#leave();
        })();
        return released;
      },
    };
  }

  /** Gives `temp` the name `file` unless `file` exists; false when it does. */
  async #linkNew(temp: string, file: string): Promise<boolean> {
    try {
      await link(temp, file);
      return true;
    } catch (error) {
      const code = systemErrorCode(error);
      if (code === "EEXIST") return false;
      if (!LINK_UNSUPPORTED.has(code ?? "")) throw error;
    }
    // No hard links here (some network and FUSE file systems): we hold the id's lock, so
    // checking and renaming is safe against every writer that follows the lock protocol.
    const exists = await stat(file).then(
      () => true,
      (error: unknown) => {
        if (systemErrorCode(error) === "ENOENT") return false;
        throw error;
      },
    );
    if (exists) return false;
    await rename(temp, file);
    return true;
  }

  #checkId(segmentId: string): void {
    if (parseSegmentId(segmentId) === undefined) {
      throw new SegmentStoreError(
        "SEGMENT_NOT_FOUND",
        `"${segmentId}" is not a segment id (expected "seg-" and at least 10 digits, as listed by listSegments())`,
      );
    }
  }

  #notFound(segmentId: string, file: string): SegmentStoreError {
    return new SegmentStoreError(
      "SEGMENT_NOT_FOUND",
      `segment ${segmentId} does not exist in ${this.dir}; listSegments() shows the segments there`,
      { file },
    );
  }

  #tailWarning(file: string, scan: SegmentScan, size: number, dropped: boolean): SegmentWarning {
    const bytes = size - scan.validLength;
    const what = dropped
      ? `dropped ${bytes} bytes`
      : `ignored ${bytes} bytes (opening the segment for writing cuts them off)`;
    return {
      code: "SEGMENT_TAIL_RECOVERED",
      message:
        `${file}:${scan.records.length + 1}: ${what} after the last whole record (seq ${scan.records.length - 1}): ` +
        `${scan.tailReason ?? "torn tail"}; an append was interrupted before it was acknowledged`,
      file,
    };
  }

  async openSegment(segmentId: string, options: OpenSegmentOptions = {}): Promise<OpenSegmentResult> {
    this.#checkId(segmentId);
    const file = this.segmentFile(segmentId);
    try {
      await stat(file);
    } catch (error) {
      if (systemErrorCode(error) === "ENOENT") throw this.#notFound(segmentId, file);
      throw segmentIoError(file, "open the segment", error);
    }
    if (this.#open.has(segmentId)) {
      throw new SegmentStoreError(
        "SEGMENT_LOCKED",
        `segment ${segmentId} already has a writer open in this store instance; only one writer may append to a segment. Close that writer first.`,
        { file },
      );
    }
    this.#open.add(segmentId);
    let warnings: SegmentWarning[];
    try {
      warnings = await this.#enter();
    } catch (error) {
      this.#open.delete(segmentId);
      throw error;
    }
    const lock = this.#release(segmentId);
    let handle: FileHandle | undefined;
    try {
      try {
        handle = await open(file, "r+");
      } catch (error) {
        if (systemErrorCode(error) === "ENOENT") throw this.#notFound(segmentId, file);
        throw error;
      }
      const data = await readWhole(handle);
      const scan = scanSegment(data, file);
      if (scan.tailReason !== undefined) {
        if (options.recoverTail === false) {
          const line = scan.records.length + 1;
          throw new SegmentStoreError(
            "SEGMENT_CORRUPT",
            `segment ends in a torn record (${scan.tailReason}); the file was left unchanged — ` +
              `open it with recoverTail enabled to cut the ${data.length - scan.validLength} bytes off`,
            { file, line },
          );
        }
        await handle.truncate(scan.validLength);
        await handle.sync();
        warnings.push(this.#tailWarning(file, scan, data.length, true));
      }
      const writer = new FileSegmentWriter(segmentId, file, handle, lock, scan.records.length, scan.validLength);
      return { records: scan.records, writer, warnings };
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await lock.release().catch(() => undefined);
      throw segmentIoError(file, "open the segment", error);
    }
  }

  async readSegment(segmentId: string): Promise<ReadSegmentResult> {
    this.#checkId(segmentId);
    const file = this.segmentFile(segmentId);
    let data: Buffer;
    try {
      const handle = await open(file, "r");
      try {
        data = await readWhole(handle);
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (systemErrorCode(error) === "ENOENT") throw this.#notFound(segmentId, file);
      throw segmentIoError(file, "read the segment", error);
    }
    const scan = scanSegment(data, file);
    const warnings = scan.tailReason === undefined ? [] : [this.#tailWarning(file, scan, data.length, false)];
    return { records: scan.records, warnings };
  }

  async listSegments(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (systemErrorCode(error) === "ENOENT") return [];
      throw segmentIoError(this.dir, "list the segment directory", error);
    }
    const ids: string[] = [];
    for (const name of names) {
      const id = SEGMENT_FILE.exec(name)?.[1];
      if (id !== undefined && parseSegmentId(id) !== undefined) ids.push(id);
    }
    return ids.sort(compareSegmentIds);
  }

  async latestSegment(): Promise<string | undefined> {
    return (await this.listSegments()).at(-1);
  }
}
