import type { FileHandle } from "node:fs/promises";
import { chmod, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { segmentIoError, systemErrorCode } from "./segment-store-error.ts";

/*
 * A pod's log holds what the model read, so everything a store creates is private: directories
 * 0700 and files 0600 whatever the umask. Created with that mode, then chmod-ed only when the
 * umask could have taken an owner bit away (the common umasks never do, so that costs nothing).
 * Existing directories and files are left as they are (never loosened).
 */

/** Mode of every directory a store creates. */
export const PRIVATE_DIRECTORY = 0o700;
/** Mode of every file a store creates. */
export const PRIVATE_FILE = 0o600;

/** True when the umask takes away a bit of `mode` (reading it back is the only way Node offers). */
function umaskStrips(mode: number): boolean {
  const mask = process.umask();
  return (mask & mode) !== 0;
}

/** Gives a file just created through `handle` the private mode if the umask stripped part of it. */
export async function privateFileMode(handle: FileHandle): Promise<void> {
  if (umaskStrips(PRIVATE_FILE)) await handle.chmod(PRIVATE_FILE);
}

/**
 * Creates `dir` and its missing parents, each 0700. Unlike `mkdir({ recursive: true })`, which
 * loops forever on Node 20 where a parent exists but refuses children (`/proc/nope`), each
 * missing level is tried once: such a directory is a SEGMENT_IO error at once.
 */
export async function makePrivateDirectory(dir: string): Promise<void> {
  try {
    await makeLevel(dir);
  } catch (error) {
    throw segmentIoError(dir, "create the segment directory", error);
  }
}

async function makeLevel(dir: string): Promise<void> {
  try {
    await mkdir(dir, PRIVATE_DIRECTORY);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === "EEXIST") return;
    const parent = dirname(dir);
    if (code !== "ENOENT" || parent === dir) throw error;
    await makeLevel(parent);
    // Once more only: a parent that exists and still has no room for `dir` is an error, not a retry.
    try {
      await mkdir(dir, PRIVATE_DIRECTORY);
    } catch (again) {
      if (systemErrorCode(again) === "EEXIST") return;
      throw again;
    }
  }
  if (umaskStrips(PRIVATE_DIRECTORY)) await chmod(dir, PRIVATE_DIRECTORY);
}
