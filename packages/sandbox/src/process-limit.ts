import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SandboxError } from "./sandbox-error.ts";

/** Processes (threads included) one command may have running at once unless the caller says otherwise. */
export const DEFAULT_MAX_PROCESSES = 2048;

/** The directory, under a cgroup hierarchy's root, that holds one pids cgroup per running command. */
export const CGROUP_DIR_NAME = "insomnia-sandbox";

/**
 * How the number of a command's processes is bounded, so a fork bomb stays inside its own
 * budget instead of filling the machine's process table:
 * - `rlimit`: `pod` runs as a user other than root, so inside the sandbox's own user namespace
 *   `RLIMIT_NPROC` counts that namespace's processes only and cannot be raised again;
 * - `cgroup`: `pod` runs as root, which RLIMIT_NPROC never stops (the kernel exempts uid 0
 *   whatever namespace it is in), so each command gets a pids cgroup of its own under `parent`;
 * - `none`: neither works here; commands are still sandboxed and killed at their timeout, but a
 *   fork bomb can fill the process table until then (`reason` says why, for `pod check`).
 */
export type ProcessLimit =
  | { readonly kind: "rlimit" }
  | { readonly kind: "cgroup"; readonly parent: string; readonly version: 1 | 2 }
  | { readonly kind: "none"; readonly reason: string };

/** What {@link detectProcessLimit} may look at (tests pass their own). */
export interface ProcessLimitProbe {
  /** The effective user id of `pod` (default `process.geteuid()`). */
  readonly uid?: number | undefined;
  /** The bubblewrap program: a setuid-root one creates no user namespace. */
  readonly bwrapPath: string;
  /** Where mount points are read from (default `/proc/self/mountinfo`). */
  readonly mountinfo?: string | undefined;
}

/** How commands started by this process will be bounded (looked at once, then remembered per bwrap). */
export function detectProcessLimit(probe: ProcessLimitProbe): ProcessLimit {
  const uid = probe.uid ?? process.geteuid?.() ?? -1;
  if (uid !== 0) {
    let setuid = false;
    try {
      setuid = (statSync(probe.bwrapPath).mode & 0o4000) !== 0;
    } catch {
      // Not found: detectSandbox has said so already.
    }
    if (setuid) {
      return {
        kind: "none",
        reason: `${probe.bwrapPath} is setuid root, so commands get no user namespace of their own to count processes in`,
      };
    }
    return { kind: "rlimit" };
  }
  const tried: string[] = [];
  for (const mount of pidsHierarchies(probe.mountinfo ?? "/proc/self/mountinfo")) {
    try {
      return { kind: "cgroup", parent: prepareParent(mount.path, mount.version), version: mount.version };
    } catch (error) {
      tried.push(`${mount.path}: ${(error as Error).message}`);
    }
  }
  return {
    kind: "none",
    reason:
      tried.length === 0
        ? "pod runs as root (which RLIMIT_NPROC does not limit) and no cgroup hierarchy with the pids controller is mounted"
        : `pod runs as root (which RLIMIT_NPROC does not limit) and no pids cgroup can be made (${tried.join("; ")})`,
  };
}

const remembered = new Map<string, ProcessLimit>();

/** {@link detectProcessLimit} for this process and `bwrapPath`, looked at once. */
export function processLimitFor(bwrapPath: string): ProcessLimit {
  let limit = remembered.get(bwrapPath);
  if (limit === undefined) {
    limit = detectProcessLimit({ bwrapPath });
    remembered.set(bwrapPath, limit);
  }
  return limit;
}

/** How to get a bound where there is none, shown with `PROCESS_LIMIT_UNAVAILABLE`. */
export const PROCESS_LIMIT_HINT =
  "run pod as a user other than root, or as root where a pids cgroup can be made (cgroup v2 with the pids controller, or a writable cgroup v1 pids hierarchy; a container needs its cgroup file system writable)";

/** The `pod check` warning for a machine where commands run without a bound on their processes. */
export function processLimitWarning(limit: ProcessLimit): SandboxError | undefined {
  if (limit.kind !== "none") return undefined;
  return new SandboxError(
    "PROCESS_LIMIT_UNAVAILABLE",
    `run_command's processes are not bounded here: ${limit.reason}; commands still run sandboxed and are killed at their timeout, but a fork bomb can fill the machine's process table until then (${PROCESS_LIMIT_HINT})`,
    { hint: PROCESS_LIMIT_HINT },
  );
}

/** The mounted cgroup hierarchies that can count processes: cgroup v2 with `pids` available first, then v1 `pids`. */
function pidsHierarchies(mountinfo: string): { path: string; version: 1 | 2 }[] {
  let text = "";
  try {
    text = readFileSync(mountinfo, "utf8");
  } catch {
    return [];
  }
  const found: { path: string; version: 1 | 2 }[] = [];
  for (const line of text.split("\n")) {
    const [before, after] = line.split(" - ");
    if (before === undefined || after === undefined) continue;
    const path = unescapeMountPath(before.split(" ")[4] ?? "");
    const [type, , options = ""] = after.split(" ");
    if (type === "cgroup2") {
      try {
        if (readFileSync(join(path, "cgroup.controllers"), "utf8").split(/\s+/).includes("pids")) {
          found.push({ path, version: 2 });
        }
      } catch {
        // Not readable: not usable either.
      }
    } else if (type === "cgroup" && options.split(",").includes("pids")) {
      found.push({ path, version: 1 });
    }
  }
  return found.sort((a, b) => b.version - a.version);
}

/** mountinfo writes space, tab, newline and backslash in paths as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * Makes `<root>/insomnia-sandbox` able to hold pids cgroups, removes the ones `pod` processes
 * that are gone left behind, and proves a command cgroup can be made there. Throws when not.
 */
function prepareParent(root: string, version: 1 | 2): string {
  const parent = join(root, CGROUP_DIR_NAME);
  if (version === 2) enableController(root);
  mkdirSync(parent, { recursive: true });
  if (version === 2) enableController(parent);
  removeStale(parent);
  const probe = CommandCgroup.create(parent, 1);
  rmdirSync(probe.path);
  return parent;
}

/** cgroup v2: lets the children of `dir` count processes. */
function enableController(dir: string): void {
  const control = join(dir, "cgroup.subtree_control");
  if (readFileSync(control, "utf8").split(/\s+/).includes("pids")) return;
  writeFileSync(control, "+pids", { flag: "r+" });
}

/** Command cgroups of `pod` processes that died before removing them (they are empty by then). */
function removeStale(parent: string): void {
  for (const name of readdirSync(parent)) {
    const owner = /^(\d+)\./.exec(name)?.[1];
    if (owner === undefined || isAlive(Number(owner))) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // Still in use or already gone.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

let sequence = 0;

/** The pids cgroup of one command: at most `max` processes; joined before the command starts. */
export class CommandCgroup {
  /** Its directory. */
  readonly path: string;

  private constructor(path: string) {
    this.path = path;
  }

  /** Makes a new cgroup under `parent` (named after this process, for clean-up) limited to `max` processes. */
  static create(parent: string, max: number): CommandCgroup {
    let path: string;
    for (;;) {
      path = join(parent, `${process.pid}.${++sequence}`);
      try {
        mkdirSync(path);
        break;
      } catch (error) {
        // Left by an earlier process that had this pid: take the next name.
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    try {
      // "r+": the kernel makes this file; where it does not exist, this is no cgroup at all.
      writeFileSync(join(path, "pids.max"), String(max), { flag: "r+" });
    } catch (error) {
      rmdirSync(path);
      throw error;
    }
    return new CommandCgroup(path);
  }

  /** Moves a process into it; what that process starts from then on is counted too. */
  join(pid: number): void {
    writeFileSync(join(this.path, "cgroup.procs"), String(pid), { flag: "r+" });
  }

  /** Removes it once its last process is gone (the kernel frees dying processes a moment after they are reaped). */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        rmdirSync(this.path);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return;
        if (code !== "EBUSY") return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Left for the next pod's detectProcessLimit, which removes cgroups of dead pods.
  }
}
