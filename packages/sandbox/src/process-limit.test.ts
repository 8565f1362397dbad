import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { detectProcessLimit, processLimitWarning } from "./process-limit.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "insomnia-limit-"));
  dirs.push(dir);
  return dir;
}

/** A program file standing in for bwrap, setuid root or not. */
function fakeBwrap(setuid: boolean): string {
  const file = join(tempDir(), "bwrap");
  writeFileSync(file, "");
  chmodSync(file, setuid ? 0o4755 : 0o755);
  return file;
}

/** A mountinfo file listing `mounts` as (mount point, file system type, super options). */
function mountinfo(mounts: [string, string, string][]): string {
  const file = join(tempDir(), "mountinfo");
  const lines = mounts.map(
    ([path, type, options], index) =>
      `${30 + index} 1 0:${index} / ${path.replaceAll(" ", "\\040")} rw,relatime shared:1 - ${type} ${type} ${options}`,
  );
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

describe("how a command's processes are bounded", () => {
  test("a_user_other_than_root_is_bounded_by_rlimit_nproc_in_the_sandboxs_user_namespace", () => {
    expect(detectProcessLimit({ uid: 1000, bwrapPath: fakeBwrap(false) })).toEqual({ kind: "rlimit" });
  });

  test("a_setuid_bwrap_gives_no_user_namespace_so_no_bound_and_a_warning_saying_why", () => {
    const bwrapPath = fakeBwrap(true);
    const limit = detectProcessLimit({ uid: 1000, bwrapPath });
    expect(limit).toEqual({ kind: "none", reason: expect.stringContaining(`${bwrapPath} is setuid root`) });
    const warning = processLimitWarning(limit);
    expect([warning?.code, warning?.detail]).toEqual([
      "PROCESS_LIMIT_UNAVAILABLE",
      expect.stringMatching(/^run_command's processes are not bounded here: .* is setuid root.*a fork bomb can fill/),
    ]);
  });

  test("root_without_a_pids_cgroup_hierarchy_has_no_bound_and_says_rlimit_does_not_apply", () => {
    const limit = detectProcessLimit({
      uid: 0,
      bwrapPath: fakeBwrap(false),
      mountinfo: mountinfo([["/sys/fs/cgroup/cpu", "cgroup", "rw,cpu"]]),
    });
    expect(limit).toEqual({
      kind: "none",
      reason: expect.stringMatching(/root \(which RLIMIT_NPROC does not limit\)/),
    });
    expect(processLimitWarning(limit)?.code).toBe("PROCESS_LIMIT_UNAVAILABLE");
  });

  test("a_directory_that_only_looks_like_a_cgroup_is_not_taken_for_one", () => {
    // A cgroup2 mount point (with a space in its path) whose files are ordinary ones: the
    // controller file says pids, but no kernel makes the control files of a new directory there.
    const fake = join(tempDir(), "cgroup root");
    mkdirSync(fake);
    writeFileSync(join(fake, "cgroup.controllers"), "cpu pids\n");
    writeFileSync(join(fake, "cgroup.subtree_control"), "pids\n");
    const limit = detectProcessLimit({
      uid: 0,
      bwrapPath: fakeBwrap(false),
      mountinfo: mountinfo([[fake, "cgroup2", "rw"]]),
    });
    expect(limit).toEqual({ kind: "none", reason: expect.stringContaining(`${fake}: ENOENT`) });
  });

  test("a_bound_that_holds_gives_no_warning", () => {
    expect(processLimitWarning({ kind: "rlimit" })).toBeUndefined();
    expect(
      processLimitWarning({ kind: "cgroup", parent: "/sys/fs/cgroup/insomnia-sandbox", version: 2 }),
    ).toBeUndefined();
  });
});
