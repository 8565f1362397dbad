import { spawnSync } from "node:child_process";

/** Whether this machine can run the sandbox tests, and if not, the one line that says why. */
export interface SandboxGate {
  readonly available: boolean;
  readonly line: string;
}

let gate: SandboxGate | undefined;

/**
 * Runs `true` in a bubblewrap sandbox with the namespaces @insomnia/sandbox uses. Without
 * bubblewrap (or namespaces) the sandbox tests are left out with one line saying so; with
 * `INSOMNIA_REQUIRE_SANDBOX=1` (set by .ci/run) that is an error instead, so CI never skips them.
 */
export function sandboxGate(): SandboxGate {
  if (gate !== undefined) return gate;
  const probe = spawnSync(
    "bwrap",
    ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--ro-bind", "/", "/"].concat([
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--",
      "true",
    ]),
    { encoding: "utf8" },
  );
  const why =
    probe.error !== undefined
      ? "bubblewrap (bwrap) is not installed"
      : probe.status !== 0
        ? `bubblewrap cannot create namespaces here: ${(probe.stderr ?? "").trim().split("\n")[0]}`
        : undefined;
  if (why !== undefined && process.env["INSOMNIA_REQUIRE_SANDBOX"] === "1") {
    throw new Error(`INSOMNIA_REQUIRE_SANDBOX=1 but ${why}; install bubblewrap (apt-get install bubblewrap)`);
  }
  gate =
    why === undefined
      ? { available: true, line: "" }
      : {
          available: false,
          line: `SANDBOX TESTS SKIPPED: ${why} (install bubblewrap to run the command sandbox's escape suite)`,
        };
  return gate;
}
