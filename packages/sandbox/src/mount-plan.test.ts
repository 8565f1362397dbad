import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";
import { afterEach, describe, expect, test } from "vitest";
import { bwrapArgs } from "./bwrap-args.ts";
import { type EscapeTree, makeEscapeTree } from "./__fixtures__/escape-tree.ts";
import { effectiveScope, type MountOp, planMounts, type SystemView } from "./mount-plan.ts";

const NO_SYSTEM: SystemView = { entries: [], hidden: [] };
let tree: EscapeTree | undefined;
afterEach(() => tree?.cleanup());

function plan(system: SystemView = NO_SYSTEM): MountOp[] {
  tree = makeEscapeTree();
  return planMounts(effectiveScope(tree.scope, system), system, tree.ws);
}

describe("mounts from a scope", () => {
  test("targets_are_bound_as_granted_denied_paths_hidden_git_read_only_and_non_recursive_subdirectories_masked", () => {
    const ops = plan();
    const t = tree!;
    expect(ops).toEqual([
      { op: "ro-bind", path: t.data },
      { op: "ro-bind", path: t.flat },
      { op: "bind", path: t.ws },
      { op: "mask", path: join(t.flat, "sub"), mode: 0o111 },
      { op: "ro-bind", path: join(t.ws, ".git") },
      { op: "hide-file", path: join(t.ws, "denied.txt") },
      { op: "mask", path: join(t.ws, "secret"), mode: 0o000 },
    ]);
  });

  test("system_directories_are_read_only_symlinks_kept_and_unreadable_system_files_hidden", () => {
    tree = makeEscapeTree();
    const etc = join(tree.root, "etc");
    mkdirSync(etc);
    writeFileSync(join(etc, "shadow"), "x");
    const system: SystemView = {
      entries: [
        { kind: "dir", path: etc },
        { kind: "symlink", path: "/bin", target: "usr/bin" },
      ],
      hidden: [join(etc, "shadow")],
    };
    const ops = planMounts(effectiveScope(tree.scope, system), system, tree.ws);
    expect(ops[0]).toEqual({ op: "symlink", path: "/bin", target: "usr/bin" });
    expect(ops).toContainEqual({ op: "ro-bind", path: etc });
    expect(ops).toContainEqual({ op: "hide-file", path: join(etc, "shadow") });
  });

  test("a_deny_write_rule_makes_its_subtree_read_only_and_a_write_rule_inside_a_read_target_writable", () => {
    tree = makeEscapeTree();
    const t = tree;
    mkdirSync(join(t.ws, "vendor"));
    mkdirSync(join(t.data, "out"));
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "ws", permission: "write" },
          { target: "data", permission: "read" },
          { target: "data/out", permission: "write" },
        ],
        deny: [{ target: "ws/vendor", permission: "write" }],
      },
      t.root,
    );
    const ops = planMounts(effectiveScope(scope, NO_SYSTEM), NO_SYSTEM, t.ws);
    expect(ops).toContainEqual({ op: "ro-bind", path: join(t.ws, "vendor") });
    expect(ops).toContainEqual({ op: "bind", path: join(t.data, "out") });
  });

  test("a_pwd_outside_every_mount_gets_an_empty_directory", () => {
    tree = makeEscapeTree();
    const t = tree;
    const ops = planMounts(effectiveScope(t.scope, NO_SYSTEM), NO_SYSTEM, t.outside);
    expect(ops.at(-1)).toEqual({ op: "dir", path: t.outside });
    expect(ops.filter((op) => op.path === t.outside)).toHaveLength(1);
  });
});

describe("bwrap arguments", () => {
  test("namespaces_environment_and_mounts_in_order_with_masks_read_only_last", () => {
    const args = bwrapArgs(
      [
        { op: "bind", path: "/w" },
        { op: "mask", path: "/w/m", mode: 0o111 },
        { op: "hide-file", path: "/w/f" },
        { op: "hide-file", path: "/w/g" },
      ],
      ["bash", "-c", "true"],
      { network: false, env: { PATH: "/usr/bin", HOME: "/w" }, cwd: "/w", infoFd: 3, firstEmptyFd: 4 },
    );
    expect(args.join(" ")).toBe(
      [
        "--unshare-all --die-with-parent --new-session --cap-drop ALL --clearenv",
        "--setenv PATH /usr/bin --setenv HOME /w --info-fd 3",
        "--proc /proc --remount-ro /proc --dev /dev --tmpfs /tmp",
        "--bind /w /w --perms 0111 --tmpfs /w/m",
        "--perms 0000 --ro-bind-data 4 /w/f --perms 0000 --ro-bind-data 5 /w/g",
        "--remount-ro /w/m --chdir /w -- bash -c true",
      ].join(" "),
    );
    const networked = bwrapArgs([], ["true"], { network: true, env: {}, cwd: "/", infoFd: 3, firstEmptyFd: 4 });
    expect(networked.slice(0, 2)).toEqual(["--unshare-all", "--share-net"]);
  });
});
