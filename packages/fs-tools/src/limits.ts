/** The limits every file tool keeps; each can be changed through `fsTools(scope, options)`. */
export interface FsToolsLimits {
  /** Bytes of a file read_file looks at; a larger file is cut there with a visible note (default 10 MiB). Also the largest file edit_file edits. */
  readonly maxFileBytes: number;
  /** Bytes of text one read_file result returns at most; more is cut with a note saying how to go on (default 256 KiB). */
  readonly maxOutputBytes: number;
  /** Lines read_file returns when the call gives no `limit` (default 2000). */
  readonly defaultLineLimit: number;
  /** Entries list_dir shows (default 1000). */
  readonly maxEntries: number;
  /** Bytes write_file and edit_file write at most (default 10 MiB). */
  readonly maxWriteBytes: number;
}

/** The default {@link FsToolsLimits}. */
export const DEFAULT_LIMITS: FsToolsLimits = Object.freeze({
  maxFileBytes: 10 * 1024 * 1024,
  maxOutputBytes: 256 * 1024,
  defaultLineLimit: 2000,
  maxEntries: 1000,
  maxWriteBytes: 10 * 1024 * 1024,
});
