import { link, mkdir, open, readdir, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { join, resolve } from "node:path";
import { SegmentStoreError, segmentIoError, systemErrorCode } from "./segment-store-error.ts";
import { encodeSegmentLine, scanSegment, serializeSegmentRecord, type SegmentScan } from "./segment-codec.ts";
import { FileSegmentWriter } from "./segment-file-writer.ts";
import { compareSegmentIds, formatSegmentId, parseSegmentId } from "./segment-id.ts";
import { acquireSegmentLock } from "./segment-lock.ts";
import { randomToken } from "./segment-token.ts";
import type { SegmentStartRecord } from "./segment-record.ts";
import type {
  OpenSegmentOptions,
  OpenSegmentResult,
  ReadSegmentResult,
  SegmentStore,
  SegmentWarning,
  SegmentWriter,
} from "./segment-store.ts";

const SEGMENT_FILE = /^(seg-[0-9]{10,})\.jsonl$/;
const SEGMENT_ARTIFACT = /^(seg-[0-9]{10,})\.(?:jsonl|lock|jsonl\.tmp)(?:\..*)?$/;
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
      handle = await open(temp, "wx");
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
 * `segment-codec.ts`), an exclusive `<id>.lock` per open writer. A segment file appears
 * (by hard link from `<id>.jsonl.<token>.tmp`) only once its start record is durable, so a crash
 * during `createSegment` leaves no half-made segment behind — an empty or start-less
 * segment file is therefore reported as `SEGMENT_CORRUPT`.
 */
export class FileSegmentStore implements SegmentStore {
  /** Absolute directory holding the segment files. */
  readonly dir: string;

  /** A store in `dir` (created on the first `createSegment`). */
  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  /** Path of a segment's log file. */
  segmentFile(segmentId: string): string {
    return join(this.dir, `${segmentId}.jsonl`);
  }

  /** Path of a segment's lock file. */
  lockFile(segmentId: string): string {
    return join(this.dir, `${segmentId}.lock`);
  }

  /*
   * A create, in thread-pool round trips one after the other (a `pod run --new` waits for all
   * of them before its first request): the directory is listed (made only when missing) while
   * it is opened for the final fsync; then the start record is written to a temp file of its
   * own name and fsynced while the id's lock is taken; then the temp file is linked into place
   * and the directory fsynced while both temp names are removed. The segment file still
   * appears only once its start record is durable and only under the id's lock, and the call
   * resolves only after the directory fsync. The temp file needs no lock: its name is unique
   * (`<id>.jsonl.<token>.tmp`), and a crash leaves it as debris that is never listed, only
   * counted, as `<id>.jsonl.tmp` was.
   */
  async createSegment(start: SegmentStartRecord): Promise<SegmentWriter> {
    const json = serializeSegmentRecord(start, "(new)", "segment_start");
    const line = encodeSegmentLine(0, json);
    let directory = openDirectory(this.dir);
    let counter = await this.#listedCounter();
    if (counter === undefined) {
      try {
        await mkdir(this.dir, { recursive: true });
      } catch (error) {
        await discardDirectory(directory);
        throw segmentIoError(this.dir, "create the segment directory", error);
      }
      if ((await directory).handle === undefined) directory = openDirectory(this.dir);
      counter = await this.#nextCounter().catch(async (error: unknown) => {
        await discardDirectory(directory);
        throw error;
      });
    }
    const temp = `${this.segmentFile(formatSegmentId(counter))}.${randomToken()}.tmp`;
    const written = writeTempSegment(temp, line);
    for (; ; counter += 1) {
      const segmentId = formatSegmentId(counter);
      const file = this.segmentFile(segmentId);
      let acquired: Awaited<ReturnType<typeof acquireSegmentLock>>;
      try {
        acquired = await acquireSegmentLock(this.lockFile(segmentId), segmentId);
      } catch (error) {
        if (SegmentStoreError.is(error) && error.code === "SEGMENT_LOCKED") continue;
        await Promise.all([discardTempSegment(temp, written), discardDirectory(directory)]);
        throw error;
      }
      const { lock, cleanup } = acquired;
      let handle: FileHandle | undefined;
      try {
        const outcome = await written;
        if (outcome.handle === undefined) throw outcome.error;
        handle = outcome.handle;
        if (!(await this.#linkNew(temp, file))) {
          // The id was taken by a writer that does not lock (or a hand-made file): the next
          // id, with the same temp file, already durable.
          await Promise.all([lock.release(), cleanup]);
          continue;
        }
        const removed = unlink(temp).catch(() => undefined);
        await Promise.all([syncDirectory(this.dir, directory), removed, cleanup]);
        return new FileSegmentWriter(segmentId, file, handle, lock, 1, line.length);
      } catch (error) {
        await Promise.all([
          handle === undefined ? discardTempSegment(temp, written) : handle.close().catch(() => undefined),
          unlink(temp).catch(() => undefined),
          lock.release().catch(() => undefined),
          cleanup,
          discardDirectory(directory),
        ]);
        throw segmentIoError(file, "create the segment file", error);
      }
    }
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

  /** The next free counter by the names in the directory; undefined when it cannot be listed. */
  async #listedCounter(): Promise<number | undefined> {
    try {
      return counterAfter(await readdir(this.dir));
    } catch {
      // Missing (made next), or not listable: the directory is then made as before
      // (`mkdir` reports what is wrong with it) and listed once more.
      return undefined;
    }
  }

  async #nextCounter(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (systemErrorCode(error) === "ENOENT") return 1;
      throw segmentIoError(this.dir, "list the segment directory", error);
    }
    return counterAfter(names);
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
    const { lock, warnings, cleanup } = await acquireSegmentLock(this.lockFile(segmentId), segmentId);
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
      await cleanup;
      const writer = new FileSegmentWriter(segmentId, file, handle, lock, scan.records.length, scan.validLength);
      return { records: scan.records, writer, warnings };
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await Promise.all([lock.release().catch(() => undefined), cleanup]);
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
