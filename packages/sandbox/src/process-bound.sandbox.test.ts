import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";
import { afterAll, describe, expect, test } from "vitest";
import { processesWith } from "./__fixtures__/escape-tree.ts";
import { findOnPath } from "./availability.ts";
import { runCommandTool } from "./run-command-tool.ts";
import { Sandbox } from "./sandbox.ts";
import { DEEP_TESTS } from "../../../test/support/property-runs.ts";

// The bound a pod run by a user other than root gets (RLIMIT_NPROC in the sandbox's user
// namespace), tested for real where this suite runs as root: bwrap is started through a
// wrapper that drops to `nobody` first, as if that user had started pod.
// A smaller bound is reached sooner, so within the quick run's shorter timeout the bomb still spends most of its time against it.
const BOUND = DEEP_TESTS ? 150 : 64;
const TIMEOUT_MS = DEEP_TESTS ? 2000 : 1000;
const NOBODY = 65534;
const bwrap = findOnPath("bwrap", process.env["PATH"]);
const setpriv = findOnPath("setpriv", process.env["PATH"]);
const dir = mkdtempSync(join(tmpdir(), "insomnia-bound-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function asNobodyWorks(): boolean {
  if (process.geteuid?.() !== 0 || bwrap === undefined || setpriv === undefined) return false;
  const probe = spawnSync(
    setpriv,
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", bwrap, "--unshare-all", "--ro-bind", "/", "/", "true"],
    { stdio: "ignore" },
  );
  return probe.status === 0;
}

describe("the process bound of a pod that does not run as root", () => {
  test.runIf(asNobodyWorks())("a_real_fork_bomb_stays_under_rlimit_nproc_in_the_user_namespace", async () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    chmodSync(dir, 0o755);
    chmodSync(ws, 0o777);
    const wrapper = join(dir, "bwrap-as-nobody");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nexec ${setpriv} --reuid=${NOBODY} --regid=${NOBODY} --clear-groups ${bwrap} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const scope = Scope.fromConfig({ allow: [{ target: ws, permission: "write" }] }, ws);
    const sandbox = new Sandbox(scope, {
      bwrapPath: wrapper,
      cwd: ws,
      maxProcesses: BOUND,
      processLimit: { kind: "rlimit" },
    });
    const tool = runCommandTool(sandbox);
    expect(String(await tool.execute({ command: "id -u; ulimit -H -u; ulimit -S -u" }))).toBe(
      `exit code: 0\nstdout:\n${NOBODY}\n${BOUND}\n${BOUND}\nstderr: (empty)`,
    );
    const attempt = async (command: string, marker: string) => {
      const stop = new AbortController();
      let most = 0;
      const timer = setInterval(() => {
        const now = processesWith(marker).length;
        most = Math.max(most, now);
        // The test's own safety net: a bound that does not hold is stopped at once.
        if (now > 4 * BOUND) stop.abort();
      }, 10);
      try {
        const output = String(await tool.execute({ command, timeout_ms: TIMEOUT_MS }, { signal: stop.signal }));
        return { output, most, safetyNet: stop.signal.aborted };
      } finally {
        clearInterval(timer);
      }
    };
    // A bomb that stops by itself at 2,000 copies proves the bound before a real one runs.
    const first = `bounded-${randomUUID()}`;
    const proof = await attempt(
      `: ${first}; bomb() { [ "$(ls /proc | grep -c '^[0-9]')" -lt 2000 ] || return; bomb | bomb & }; bomb; sleep 600`,
      first,
    );
    expect([proof.safetyNet, proof.most <= BOUND + 2]).toEqual([false, true]);
    const marker = `bomb-${randomUUID()}`;
    const real = await attempt(`: ${marker}; :(){ :|:& };:; sleep 600`, marker);
    // bwrap outside the namespace and the wrapper's exec of it carry the marker too.
    expect([real.safetyNet, real.most <= BOUND + 2]).toEqual([false, true]);
    expect(real.output).toMatch(new RegExp(`^killed: still running after ${TIMEOUT_MS} ms \\(its timeout\\)`));
    expect(processesWith(marker)).toEqual([]);
    expect(String(await tool.execute({ command: "true" }))).toMatch(/^exit code: 0\n/);
  });
});
