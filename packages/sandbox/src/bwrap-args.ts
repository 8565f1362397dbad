import type { MountOp } from "./mount-plan.ts";

/** What {@link bwrapArgs} needs besides the mounts. */
export interface BwrapArgsOptions {
  /** Share the machine's network (else the sandbox has only its own loopback). */
  readonly network: boolean;
  /** The whole environment of the command. */
  readonly env: Readonly<Record<string, string>>;
  /** Directory the command starts in. */
  readonly cwd: string;
  /** Descriptor bwrap writes the sandbox's process id to. */
  readonly infoFd: number;
  /** Descriptor the sandbox waits on (for one byte) before it starts the command, if any. */
  readonly blockFd?: number | undefined;
  /** First of the descriptors, one per `hide-file` mount, that read as empty. */
  readonly firstEmptyFd: number;
}

/**
 * The bubblewrap arguments (without the program name) that run `argv` inside `mounts`: new
 * user, PID, IPC, UTS, cgroup and (unless `network`) network namespaces, no capabilities, no
 * new privileges (bwrap always sets it), its own session (no terminal injection), killed with
 * its parent, a fresh read-only `/proc`, a minimal `/dev`, a private `/tmp`, nothing of the caller's
 * environment but `env`.
 */
export function bwrapArgs(mounts: readonly MountOp[], argv: readonly string[], options: BwrapArgsOptions): string[] {
  const args = ["--unshare-all"];
  if (options.network) args.push("--share-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv");
  for (const [name, value] of Object.entries(options.env)) args.push("--setenv", name, value);
  args.push("--info-fd", String(options.infoFd));
  if (options.blockFd !== undefined) args.push("--block-fd", String(options.blockFd));
  // /proc read-only: a pod run as root is root-owned inside too, and /proc/sys (kernel
  // settings of the whole machine) checks only file modes, not capabilities.
  args.push("--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  let emptyFd = options.firstEmptyFd;
  const readOnlyAtEnd: string[] = [];
  for (const mount of mounts) {
    switch (mount.op) {
      case "bind":
      case "ro-bind":
        args.push(`--${mount.op}`, mount.path, mount.path);
        break;
      case "symlink":
        args.push("--symlink", mount.target, mount.path);
        break;
      case "mask":
        args.push("--perms", mount.mode === 0 ? "0000" : "0111", "--tmpfs", mount.path);
        // Deeper mounts are made inside it first; it turns read-only after them.
        readOnlyAtEnd.push(mount.path);
        break;
      case "hide-file":
        args.push("--perms", "0000", "--ro-bind-data", String(emptyFd++), mount.path);
        break;
      case "dir":
        args.push("--dir", mount.path);
        break;
    }
  }
  for (const path of readOnlyAtEnd) args.push("--remount-ro", path);
  args.push("--chdir", options.cwd, "--", ...argv);
  return args;
}

/** How many empty descriptors {@link bwrapArgs} refers to for `mounts`. */
export function emptyFdCount(mounts: readonly MountOp[]): number {
  return mounts.filter((mount) => mount.op === "hide-file").length;
}
