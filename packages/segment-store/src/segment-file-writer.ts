import { errorText } from "@insomnia/errors";
import type { FileHandle } from "node:fs/promises";
import { SegmentStoreError } from "./segment-store-error.ts";
import { encodeSegmentLine, serializeSegmentRecord } from "./segment-codec.ts";
import type { SegmentRecord } from "./segment-record.ts";
import type { SegmentWriter } from "./segment-store.ts";

/** What a writer gives back on close: its segment, and its share of the pod's writer lock. */
export interface SegmentHold {
  release(): Promise<void>;
}

/** Appends to one segment file: one write call per record line, fsynced before it resolves. */
export class FileSegmentWriter implements SegmentWriter {
  readonly segmentId: string;
  readonly #file: string;
  readonly #handle: FileHandle;
  readonly #lock: SegmentHold;
  #nextSeq: number;
  #position: number;
  #queue: Promise<void> = Promise.resolve();
  #failure: SegmentStoreError | undefined;
  #closing: Promise<void> | undefined;

  /** Wraps an open handle positioned after `position` bytes holding `nextSeq` whole records. */
  constructor(
    segmentId: string,
    file: string,
    handle: FileHandle,
    lock: SegmentHold,
    nextSeq: number,
    position: number,
  ) {
    this.segmentId = segmentId;
    this.#file = file;
    this.#handle = handle;
    this.#lock = lock;
    this.#nextSeq = nextSeq;
    this.#position = position;
  }

  /** Appends one message record; resolves after the line is written and fsynced. */
  append(record: SegmentRecord): Promise<void> {
    if (this.#closing !== undefined) {
      return Promise.reject(
        new SegmentStoreError(
          "SEGMENT_IO",
          `cannot append to segment ${this.segmentId}: its writer is closed; open the segment again to append`,
          {
            file: this.#file,
          },
        ),
      );
    }
    let json: string;
    try {
      json = serializeSegmentRecord(record, this.segmentId, "message");
    } catch (error) {
      return Promise.reject(error);
    }
    const run = this.#queue.then(() => this.#write(json));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #write(json: string): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure;
    const line = encodeSegmentLine(this.#nextSeq, json);
    try {
      let written = 0;
      while (written < line.length) {
        const { bytesWritten } = await this.#handle.write(
          line,
          written,
          line.length - written,
          this.#position + written,
        );
        if (bytesWritten <= 0) throw new Error("the write call wrote no bytes");
        written += bytesWritten;
      }
      await this.#handle.sync();
    } catch (cause) {
      // The file may now end in part of this line; appending after it would put a whole
      // record behind garbage, which reads as mid-file corruption. Refuse further appends.
      this.#failure = new SegmentStoreError(
        "SEGMENT_IO",
        `appending record ${this.#nextSeq} to segment ${this.segmentId} failed (${errorText(cause)}); ` +
          `this writer accepts no more records — close it and open the segment again to recover its tail`,
        { file: this.#file, cause },
      );
      throw this.#failure;
    }
    this.#position += line.length;
    this.#nextSeq += 1;
  }

  /** Waits for pending appends, closes the file and gives the segment back (the last writer of the store releases the pod lock). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#queue;
      try {
        await this.#handle.close();
      } finally {
        await this.#lock.release();
      }
    })();
    return this.#closing;
  }
}
