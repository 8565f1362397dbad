import { parse, resolve } from "node:path";
import { type ReadInsideRootOptions, type ReadInsideRootResult, readTextInsideRoot } from "./read-text-inside-root.ts";

/** What readSmallFile reads, and where the file may be. */
export interface ReadSmallFileOptions {
  /** The most bytes read; a bigger file is refused (`too-large`). */
  readonly maxBytes: number;
  /**
   * When set, the file's real path must be this directory's real path or inside it
   * (`outside-root` otherwise); when undefined, the file may be anywhere.
   */
  readonly within?: string | undefined;
  /** As readTextInsideRoot's `decode`: `text` (the default), `lf` or `bytes`. */
  readonly decode?: ReadInsideRootOptions["decode"];
}

/**
 * Reads a small regular file that a user named (a key file, say) with readTextInsideRoot's
 * checks: symlinks followed, a directory, FIFO or device never opened, at most `maxBytes`.
 * Only the place differs: anywhere, or inside `within` when someone else chose the path.
 */
export function readSmallFile(file: string, options: ReadSmallFileOptions): ReadInsideRootResult {
  // Without `within`, the root of the file's own file system: every real path is inside it.
  const root = options.within ?? parse(resolve(file)).root;
  return readTextInsideRoot(file, {
    root,
    maxBytes: options.maxBytes,
    inside: "or-same",
    ...(options.decode === undefined ? {} : { decode: options.decode }),
  });
}
