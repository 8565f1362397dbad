import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { userHome } from "./manifest-paths.ts";

/** Where a pod runs: the directory holding the `.insomnia/` found from the cwd, or the cwd itself. */
export interface WorkspaceLocation {
  /** Absolute path of the workspace root (not resolved through symlinks). */
  readonly root: string;
  /** True when a `.insomnia/` directory was found (in the cwd or above it). */
  readonly found: boolean;
}

/** Options of {@link findWorkspace}. */
export interface FindWorkspaceOptions {
  /** The user a `.insomnia/` above the cwd must belong to (default: this process's uid, where there is one). */
  uid?: number | undefined;
}

function exists(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false }) !== undefined;
}

/**
 * Looks for `.insomnia/` in `cwd` and each directory above it, as git looks for `.git`:
 * the search stops at a repository root (a directory holding `.git`, looked at itself) and
 * below the home directory, so a pod started in a subdirectory of a checkout uses the
 * checkout's manifest but never one from a directory above the repository or above home.
 * Like git's `safe.directory`, a `.insomnia/` above the cwd that belongs to another user
 * ends the search unfound: someone else's `/tmp/.insomnia` must not become the workspace
 * (and so the default scope) of every directory under `/tmp`.
 */
export function findWorkspace(
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  options: FindWorkspaceOptions = {},
): WorkspaceLocation {
  const start = resolve(cwd);
  const home = userHome(env);
  const uid = options.uid ?? process.getuid?.();
  for (let dir = start; ; ) {
    // Home itself is looked at only when the pod starts there: a ~/.insomnia must not make
    // every directory under home one workspace whose default scope is all of home.
    if (dir === home && dir !== start) break;
    const found = statSync(join(dir, ".insomnia"), { throwIfNoEntry: false });
    if (found?.isDirectory() === true) {
      if (dir !== start && uid !== undefined && found.uid !== uid) break;
      return { root: dir, found: true };
    }
    if (exists(join(dir, ".git")) || dir === home) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return { root: start, found: false };
}
