import type { Scope } from "@insomnia/scope";
import { lstatSync, mkdirSync, rmdirSync } from "node:fs";
import * as path from "node:path";
import {
  ChangedDuringCall,
  closeQuietly,
  entryPath,
  errnoOf,
  type OpenDir,
  openChildDir,
  openDir,
} from "./descriptor.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import { type Need, requirePermission, shown } from "./scope-check.ts";

/** Most directories one write_file creates on the way to its file. */
export const MAX_NEW_DIRECTORIES = 32;

/** A directory on the way to the target, opened by this call (`made`: and created by it). */
export interface CreatedDir {
  readonly parent: OpenDir;
  readonly name: string;
  readonly dir: OpenDir;
  readonly made: boolean;
}

/** Who is asking, for checks and messages. */
export interface CallContext {
  readonly scope: Scope;
  readonly tool: string;
  /** The path as the model wrote it. */
  readonly asked: string;
}

/** The directory holding the target, open, and the target's name in it. */
export interface Located {
  readonly dir: OpenDir;
  readonly name: string;
  /** Real absolute path of the target: the descriptor's path plus `name`. */
  readonly path: string;
  /** Directories this call created on the way (outermost first), removed again by `abandon`. */
  readonly created: readonly CreatedDir[];
}

/**
 * Opens the directory that holds `canonical` (already checked by name) and checks the
 * permission again on the path the kernel reports for that directory, so `..`, symlinks and
 * a parent swapped for a symlink after the first check are all judged by where the call
 * will really act. With `create`, missing directories are made one by one, each checked
 * before anything is created and read back after.
 */
export function locate(ctx: CallContext, canonical: string, need: Need, create: boolean): Located {
  const parent = path.dirname(canonical);
  const name = path.basename(canonical);
  if (parent === canonical || name === "") {
    throw new FsToolsError("NOT_A_FILE", `${ctx.tool} refused ${canonical}: it is the root directory`, {
      tool: ctx.tool,
      path: canonical,
    });
  }
  let dir: OpenDir;
  let created: readonly CreatedDir[] = [];
  try {
    dir = openDir(parent);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT" && create) {
      ({ dir, created } = createParents(ctx, parent, name));
    } else throw failure(ctx, parent, error, "its directory");
  }
  const real = path.join(dir.real, name);
  try {
    requirePermission(ctx.scope, ctx.tool, ctx.asked, real, need, true);
  } catch (error) {
    abandon({ dir, name, path: real, created });
    throw error;
  }
  return { dir, name, path: real, created };
}

/** Closes what {@link locate} opened and removes the directories it created (they are empty unless something else wrote there). */
export function abandon(located: Located): void {
  closeQuietly(located.dir.fd);
  for (const { parent, name, dir, made } of [...located.created].reverse()) {
    try {
      if (made) rmdirSync(entryPath(parent, name));
    } catch {
      // Not empty or already gone: leave it.
    }
    if (dir !== located.dir) closeQuietly(dir.fd);
    closeQuietly(parent.fd);
  }
}

/** Closes what {@link locate} opened, keeping whatever the call created. */
export function release(located: Located): void {
  closeQuietly(located.dir.fd);
  for (const { parent } of located.created) closeQuietly(parent.fd);
}

function createParents(
  ctx: CallContext,
  parent: string,
  name: string,
): { dir: OpenDir; created: readonly CreatedDir[] } {
  const missing: string[] = [];
  let existing = parent;
  let base: OpenDir | undefined;
  while (base === undefined) {
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
    if (missing.length > MAX_NEW_DIRECTORIES) {
      throw new FsToolsError(
        "INVALID_INPUT",
        `${ctx.tool} refused ${shown(ctx.asked, path.join(parent, name))}: it would create more than ${MAX_NEW_DIRECTORIES} directories`,
        { tool: ctx.tool, path: parent },
      );
    }
    try {
      base = openDir(existing);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw failure(ctx, existing, error, "a directory on the way");
    }
  }
  // Every directory to create, and the file, must be writable where the kernel says they will be.
  try {
    let at = base.real;
    for (const segment of [...missing, name]) {
      at = path.join(at, segment);
      requirePermission(ctx.scope, ctx.tool, ctx.asked, at, "write", true);
    }
  } catch (error) {
    closeQuietly(base.fd);
    throw error;
  }
  const created: CreatedDir[] = [];
  let current = base;
  try {
    for (const segment of missing) {
      let made = true;
      try {
        mkdirSync(entryPath(current, segment));
      } catch (error) {
        if (errnoOf(error) !== "EEXIST") throw error;
        made = false;
      }
      const next = openChildDir(current, segment);
      created.push({ parent: current, name: segment, dir: next, made });
      const expected = path.join(current.real, segment);
      current = next;
      if (next.real !== expected) throw new ChangedDuringCall(`${expected} was replaced`);
    }
  } catch (error) {
    const at = current.real;
    abandon({ dir: current, name, path: "", created });
    throw failure(ctx, at, error, "a new directory");
  }
  return { dir: current, created };
}

/** The refusal for a failed system call on the way to the target. */
export function failure(ctx: CallContext, at: string, error: unknown, what: string): FsToolsError {
  if (FsToolsError.is(error)) return error;
  const options = { tool: ctx.tool, path: at, cause: error };
  if (error instanceof ChangedDuringCall) {
    return new FsToolsError(
      "CHANGED",
      `${ctx.tool} refused ${shown(ctx.asked, at)}: ${error.what} during the call; nothing was accessed; try again`,
      options,
    );
  }
  switch (errnoOf(error)) {
    case "ENOENT":
      return new FsToolsError("NOT_FOUND", `${ctx.tool}: ${what} ${at} does not exist`, options);
    case "ENOTDIR":
      // O_NOFOLLOW|O_DIRECTORY on a symlink fails with ENOTDIR: a directory became a link.
      if (isSymlink(at)) return failure(ctx, at, Object.assign(new Error("ELOOP"), { code: "ELOOP" }), what);
      return new FsToolsError("NOT_A_DIRECTORY", `${ctx.tool}: ${what} ${at} is not a directory`, options);
    case "ELOOP":
      return new FsToolsError(
        "CHANGED",
        `${ctx.tool} refused ${shown(ctx.asked, at)}: ${at} is (or became) a symbolic link during the call; nothing was accessed; try again`,
        options,
      );
    case "EACCES":
    case "EPERM":
      return new FsToolsError("IO_ERROR", `${ctx.tool}: the operating system denies access to ${at}`, options);
    default:
      return new FsToolsError(
        "IO_ERROR",
        `${ctx.tool}: cannot use ${at}: ${error instanceof Error ? error.message : String(error)}`,
        options,
      );
  }
}

function isSymlink(at: string): boolean {
  try {
    return lstatSync(at).isSymbolicLink();
  } catch {
    return false;
  }
}
