import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { type ProcessLimit, processLimitFor, processLimitWarning } from "./process-limit.ts";
import { SandboxError } from "./sandbox-error.ts";

/** How to get bubblewrap, shown with `SANDBOX_UNAVAILABLE`. */
export const INSTALL_HINT =
  "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap, apk add bubblewrap)";

/** How to let bubblewrap create namespaces, shown when it is installed but cannot. */
export const NAMESPACE_HINT =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; on Ubuntu 24.04 and later an AppArmor profile for bwrap), or run the pod where they are allowed";

/**
 * What {@link detectSandbox} found: a bwrap that works (with how a command's processes are
 * bounded, and a `PROCESS_LIMIT_UNAVAILABLE` warning when they are not), or why there is none.
 */
export type SandboxAvailability =
  | {
      readonly available: true;
      readonly bwrapPath: string;
      readonly processLimit: ProcessLimit;
      readonly warning?: SandboxError | undefined;
    }
  | { readonly available: false; readonly error: SandboxError };

/** Options of {@link detectSandbox}. */
export interface DetectOptions {
  /** The bwrap program to use instead of looking it up on `PATH`. */
  readonly bwrapPath?: string | undefined;
  /** Where `PATH` is read from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The arguments of the probe: the same namespaces and mounts every command gets. */
const PROBE_ARGS = [
  "--unshare-all",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
  "--ro-bind",
  "/",
  "/",
  "--proc",
  "/proc",
  "--dev",
  "/dev",
  "--tmpfs",
  "/tmp",
  "--",
  "true",
];

/**
 * Whether commands can run sandboxed here: Linux, bubblewrap on `PATH` (or at `bwrapPath`),
 * and bubblewrap able to create its namespaces (checked by running `true` in one). Never
 * throws; the answer carries a `SANDBOX_UNAVAILABLE` error with what to do.
 */
export async function detectSandbox(options: DetectOptions = {}): Promise<SandboxAvailability> {
  const unavailable = (detail: string, hint: string, cause?: unknown): SandboxAvailability => ({
    available: false,
    error: new SandboxError("SANDBOX_UNAVAILABLE", `${detail}; run_command is not offered (${hint})`, {
      hint,
      ...(cause === undefined ? {} : { cause }),
    }),
  });
  if (process.platform !== "linux") {
    return unavailable(
      `the command sandbox needs Linux (bubblewrap), this is ${process.platform}`,
      "run the pod on Linux to let the model run commands",
    );
  }
  const bwrapPath = options.bwrapPath ?? findOnPath("bwrap", (options.env ?? process.env)["PATH"]);
  if (bwrapPath === undefined) return unavailable("bubblewrap (bwrap) is not installed", INSTALL_HINT);
  const probe = await runProbe(bwrapPath);
  if (probe.error !== undefined)
    return unavailable(`bubblewrap (${bwrapPath}) cannot be run`, INSTALL_HINT, probe.error);
  if (probe.status !== 0) {
    const said = probe.stderr.trim().split("\n")[0] ?? "";
    return unavailable(
      `bubblewrap (${bwrapPath}) cannot create namespaces here${said === "" ? "" : `: ${said}`}`,
      NAMESPACE_HINT,
    );
  }
  const processLimit = processLimitFor(bwrapPath);
  const warning = processLimitWarning(processLimit);
  return { available: true, bwrapPath, processLimit, ...(warning === undefined ? {} : { warning }) };
}

/** The first executable `name` in the directories of `path`. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function runProbe(bwrapPath: string): Promise<{ status: number | null; stderr: string; error?: Error }> {
  return new Promise((resolve) => {
    const child = spawn(bwrapPath, PROBE_ARGS, { stdio: ["ignore", "ignore", "pipe"], env: {} });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      if (stderr.length < 4096) stderr += text;
    });
    child.on("error", (error) => resolve({ status: null, stderr, error }));
    child.on("close", (status) => resolve({ status, stderr }));
  });
}
