import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { pathSegments } from "@insomnia/safe-read";
import fc from "fast-check";
import { resolvedSegments, Scope } from "./scope.ts";
import type { ScopeConfig } from "./scope-config.ts";
import { ScopeError } from "./scope-error.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "scope-")));
  mkdirSync(join(root, "repo", "src", "deep"), { recursive: true });
  mkdirSync(join(root, "repo2"));
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "outside", "secret"), "s");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function errorOf(run: () => unknown): ScopeError {
  try {
    run();
  } catch (error) {
    if (ScopeError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a ScopeError");
}

describe("permissionAt", () => {
  test("no_matching_allow_rule_is_none", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    expect(scope.permissionAt(join(root, "outside", "secret"))).toBe("none");
    expect(scope.permissionAt(root)).toBe("none");
    expect(scope.isReadable("/")).toBe(false);
  });

  test("highest_matching_allow_rule_wins", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo", permission: "read" },
          { target: "repo/src", permission: "write" },
        ],
      },
      root,
    );
    expect(scope.permissionAt("repo/README.md")).toBe("read");
    expect(scope.permissionAt("repo/src/a.ts")).toBe("write");
    expect(scope.isWritable("repo/src/deep/b.ts")).toBe(true);
    expect(scope.isWritable("repo/x")).toBe(false);
    expect(scope.isReadable("repo/x")).toBe(true);
  });

  test("deny_read_removes_all_access", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "write" }], deny: [{ target: "repo/src", permission: "read" }] },
      root,
    );
    expect(scope.permissionAt("repo/src")).toBe("none");
    expect(scope.permissionAt("repo/src/deep/x")).toBe("none");
    expect(scope.permissionAt("repo/other")).toBe("write");
  });

  test("deny_write_caps_at_read", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "write" }], deny: [{ target: "repo/src", permission: "write" }] },
      root,
    );
    expect(scope.permissionAt("repo/src/a.ts")).toBe("read");
    expect(scope.permissionAt("repo/b.ts")).toBe("write");
  });

  test("deny_write_on_a_read_rule_leaves_read", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "read" }], deny: [{ target: "repo", permission: "write" }] },
      root,
    );
    expect(scope.permissionAt("repo/x")).toBe("read");
  });

  test("deny_without_allow_grants_nothing", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "read" }], deny: [{ target: "outside", permission: "write" }] },
      root,
    );
    expect(scope.permissionAt("outside/secret")).toBe("none");
  });

  test("non_recursive_rule_covers_target_and_direct_children_only", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write", recursive: false }] }, root);
    expect(scope.permissionAt("repo")).toBe("write");
    expect(scope.permissionAt("repo/src")).toBe("write");
    expect(scope.permissionAt("repo/file.txt")).toBe("write");
    expect(scope.permissionAt("repo/src/a.ts")).toBe("none");
    expect(scope.permissionAt("repo/src/deep")).toBe("none");
    expect(scope.permissionAt(root)).toBe("none");
  });

  test("non_recursive_deny_caps_only_direct_children", () => {
    const scope = Scope.fromConfig(
      {
        allow: [{ target: "repo", permission: "write" }],
        deny: [{ target: "repo", permission: "write", recursive: false }],
      },
      root,
    );
    expect(scope.permissionAt("repo/a")).toBe("read");
    expect(scope.permissionAt("repo/src/a")).toBe("write");
  });

  test("recursive_rule_covers_whole_subtree", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "read", recursive: true }] }, root);
    expect(scope.permissionAt("repo/src/deep/very/deep/file")).toBe("read");
  });

  test("matching_is_by_segments_not_string_prefix", () => {
    const scope = Scope.fromConfig({ allow: [{ target: join(root, "repo"), permission: "write" }] }, root);
    expect(scope.permissionAt(join(root, "repo2"))).toBe("none");
    expect(scope.permissionAt(join(root, "repo2", "x"))).toBe("none");
    expect(scope.permissionAt(join(root, "repo.bak"))).toBe("none");
    expect(scope.permissionAt(join(root, "repo"))).toBe("write");
  });

  test("root_target_matches_everything", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "/", permission: "read" }] }, root);
    expect(scope.permissionAt("/")).toBe("read");
    expect(scope.permissionAt(join(root, "outside", "secret"))).toBe("read");
    expect(scope.readable).toEqual(["/"]);
  });

  test("relative_targets_and_queries_resolve_against_base", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "./repo/../repo/src", permission: "write" }] }, root);
    expect(scope.readable).toEqual([join(root, "repo", "src")]);
    expect(scope.permissionAt("repo/src/a.ts")).toBe("write");
    expect(scope.permissionAt(join(root, "repo", "src", "a.ts"))).toBe("write");
    expect(scope.base).toBe(root);
  });

  test("nonexistent_paths_resolve_and_match", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo/not-yet", permission: "write" }] }, root);
    expect(scope.readable).toEqual([join(root, "repo", "not-yet")]);
    expect(scope.permissionAt("repo/not-yet/new/file.txt")).toBe("write");
    expect(scope.permissionAt("repo/not-yet-2")).toBe("none");
  });

  test("dotdot_in_queries_cannot_climb_out", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    expect(scope.permissionAt("repo/src/../../outside/secret")).toBe("none");
    expect(scope.permissionAt("repo/missing/../../outside/secret")).toBe("none");
    expect(scope.permissionAt("repo/src/../README.md")).toBe("write");
    expect(scope.permissionAt(`${root}/outside/../repo/x`)).toBe("write");
    expect(scope.permissionAt("../../../../../../../../etc/passwd")).toBe("none");
  });

  test("symlinked_target_applies_to_its_real_target", () => {
    symlinkSync(join(root, "repo"), join(root, "repo-link"));
    const scope = Scope.fromConfig({ allow: [{ target: "repo-link", permission: "write" }] }, root);
    expect(scope.readable).toEqual([join(root, "repo")]);
    expect(scope.permissionAt(join(root, "repo", "src", "a.ts"))).toBe("write");
    expect(scope.permissionAt(join(root, "repo-link", "src", "a.ts"))).toBe("write");
  });

  test("symlink_escaping_an_allowed_dir_is_not_readable", () => {
    symlinkSync(join(root, "outside"), join(root, "repo", "escape"));
    symlinkSync(join(root, "outside", "secret"), join(root, "repo", "secret-link"));
    symlinkSync(join(root, "outside", "not-yet"), join(root, "repo", "dangling"));
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    expect(scope.permissionAt("repo/escape/secret")).toBe("none");
    expect(scope.permissionAt("repo/escape")).toBe("none");
    expect(scope.permissionAt("repo/secret-link")).toBe("none");
    expect(scope.permissionAt("repo/dangling")).toBe("none");
    expect(scope.permissionAt("repo/dangling/new")).toBe("none");
  });

  test("symlink_escaping_to_an_allowed_outside_is_readable", () => {
    symlinkSync(join(root, "outside"), join(root, "repo", "escape"));
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo", permission: "write" },
          { target: "outside", permission: "read" },
        ],
      },
      root,
    );
    expect(scope.permissionAt("repo/escape/secret")).toBe("read");
  });

  test("deny_on_a_symlink_applies_to_its_real_target", () => {
    symlinkSync(join(root, "repo", "src"), join(root, "src-link"));
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "write" }], deny: [{ target: "src-link", permission: "read" }] },
      root,
    );
    expect(scope.permissionAt("repo/src/a.ts")).toBe("none");
  });

  test("symlink_loop_in_query_is_none", () => {
    symlinkSync(join(root, "repo", "b"), join(root, "repo", "a"));
    symlinkSync(join(root, "repo", "a"), join(root, "repo", "b"));
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    expect(scope.permissionAt("repo/a/x")).toBe("none");
    expect(scope.permissionAt("repo/ok")).toBe("write");
  });

  test("query_with_nul_byte_is_none", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "/", permission: "write" }] }, root);
    expect(scope.permissionAt(`${root}/repo\0/x`)).toBe("none");
  });

  test("base_that_is_a_symlink_is_canonicalized", () => {
    symlinkSync(join(root, "repo"), join(root, "base-link"));
    const scope = Scope.fromConfig({ allow: [{ target: ".", permission: "read" }] }, join(root, "base-link"));
    expect(scope.base).toBe(join(root, "repo"));
    expect(scope.readable).toEqual([join(root, "repo")]);
    expect(scope.permissionAt("src")).toBe("read");
  });
});

describe("readable and writable", () => {
  test("write_rules_appear_in_both_lists_in_declaration_order_without_duplicates", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo/src", permission: "read" },
          { target: "repo", permission: "write" },
          { target: "repo/src/", permission: "write" },
          { target: "outside", permission: "read" },
        ],
      },
      root,
    );
    expect(scope.readable).toEqual([join(root, "repo", "src"), join(root, "repo"), join(root, "outside")]);
    expect(scope.writable).toEqual([join(root, "repo"), join(root, "repo", "src")]);
  });

  test("rules_removed_by_deny_are_left_out", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo", permission: "write" },
          { target: "repo/src", permission: "write" },
          { target: "outside", permission: "write" },
        ],
        deny: [
          { target: "repo/src", permission: "write" },
          { target: "outside", permission: "read" },
        ],
      },
      root,
    );
    expect(scope.readable).toEqual([join(root, "repo"), join(root, "repo", "src")]);
    expect(scope.writable).toEqual([join(root, "repo")]);
  });

  test("lists_are_frozen", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    expect(Object.isFrozen(scope.readable)).toBe(true);
    expect(Object.isFrozen(scope.writable)).toBe(true);
  });
});

describe("toData", () => {
  test("returns_frozen_plain_values", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo", permission: "write" },
          { target: "outside", permission: "read", recursive: false },
        ],
      },
      root,
    );
    const data = scope.toData();
    expect(Object.isFrozen(data)).toBe(true);
    expect(Object.isFrozen(data.readable)).toBe(true);
    expect(Object.isFrozen(data.writable)).toBe(true);
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Array.isArray(data.readable)).toBe(true);
    expect(JSON.parse(JSON.stringify(data))).toEqual({
      readable: [join(root, "repo"), join(root, "outside")],
      writable: [join(root, "repo")],
      summary: scope.summary(),
    });
  });
});

describe("fromConfig errors", () => {
  const allow: ScopeConfig["allow"] = [{ target: ".", permission: "read" }];

  test("relative_base_is_invalid_base", () => {
    const error = errorOf(() => Scope.fromConfig({ allow }, "relative/dir"));
    expect(error.code).toBe("INVALID_BASE");
    expect(error.path).toBe("relative/dir");
    expect(error.message).toContain("absolute");
  });

  test("non_string_or_nul_base_is_invalid_base", () => {
    expect(errorOf(() => Scope.fromConfig({ allow }, "" as string)).code).toBe("INVALID_BASE");
    expect(errorOf(() => Scope.fromConfig({ allow }, 42 as unknown as string)).code).toBe("INVALID_BASE");
    expect(errorOf(() => Scope.fromConfig({ allow }, "/tmp\0x")).code).toBe("INVALID_BASE");
  });

  test("looping_base_is_invalid_base_with_cause", () => {
    symlinkSync(join(root, "loop"), join(root, "loop"));
    const error = errorOf(() => Scope.fromConfig({ allow }, join(root, "loop")));
    expect(error.code).toBe("INVALID_BASE");
    expect(ScopeError.is(error.cause)).toBe(true);
    expect((error.cause as ScopeError).code).toBe("SYMLINK_LOOP");
  });

  test("empty_or_missing_allow_is_no_allow_rule", () => {
    expect(errorOf(() => Scope.fromConfig({ allow: [] }, root)).code).toBe("NO_ALLOW_RULE");
    expect(errorOf(() => Scope.fromConfig({} as ScopeConfig, root)).code).toBe("NO_ALLOW_RULE");
    expect(errorOf(() => Scope.fromConfig(null as unknown as ScopeConfig, root)).code).toBe("NO_ALLOW_RULE");
    const onlyDeny = errorOf(() => Scope.fromConfig({ allow: [], deny: [{ target: "x", permission: "read" }] }, root));
    expect(onlyDeny.code).toBe("NO_ALLOW_RULE");
    expect(onlyDeny.message).toContain("scope.allow");
  });

  test.each([
    ["empty target", { target: "", permission: "read" }, "target"],
    ["missing target", { permission: "read" }, "target"],
    ["non-string target", { target: 3, permission: "read" }, "target"],
    ["NUL in target", { target: "a\0b", permission: "read" }, "NUL"],
    ["bad permission", { target: "a", permission: "execute" }, "permission"],
    ["missing permission", { target: "a" }, "permission"],
    ["bad recursive", { target: "a", permission: "read", recursive: "yes" }, "recursive"],
    ["not an object", "a", "object"],
  ])("invalid_rule_names_its_list_and_index: %s", (_name, rule, mentions) => {
    const config = { allow: [...allow, ...allow, rule] } as unknown as ScopeConfig;
    const error = errorOf(() => Scope.fromConfig(config, root));
    expect(error.code).toBe("INVALID_RULE");
    expect(error.rule).toBe("scope.allow[2]");
    expect(error.message.startsWith("scope.allow[2]: ")).toBe(true);
    expect(error.message).toContain(mentions);
  });

  test("invalid_deny_rule_names_deny_list", () => {
    const error = errorOf(() =>
      Scope.fromConfig({ allow, deny: [{ target: "x", permission: "nope" as "read" }] }, root),
    );
    expect(error.code).toBe("INVALID_RULE");
    expect(error.rule).toBe("scope.deny[0]");
    expect(error.message).toContain("scope.deny[0]");
  });

  test("deny_that_is_not_a_list_is_invalid_rule", () => {
    const error = errorOf(() => Scope.fromConfig({ allow, deny: {} as unknown as [] }, root));
    expect(error.code).toBe("INVALID_RULE");
    expect(error.rule).toBe("scope.deny");
  });

  test("looping_target_is_invalid_rule_with_cause", () => {
    symlinkSync("loop", join(root, "loop"));
    const error = errorOf(() =>
      Scope.fromConfig({ allow: [...allow, { target: "loop/x", permission: "read" }] }, root),
    );
    expect(error.code).toBe("INVALID_RULE");
    expect(error.rule).toBe("scope.allow[1]");
    expect((error.cause as ScopeError).code).toBe("SYMLINK_LOOP");
  });

  test("undefined_optional_fields_are_accepted", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "read", recursive: undefined }], deny: undefined },
      root,
    );
    expect(scope.permissionAt("repo/src/deep/x")).toBe("read");
  });
});

describe("explain", () => {
  test("explain_names_the_allow_rule_and_the_deny_rule_that_decided", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo", permission: "read" },
          { target: "repo/src", permission: "write" },
        ],
        deny: [
          { target: "repo/src/deep", permission: "write" },
          { target: "repo/src/deep", permission: "read", recursive: false },
        ],
      },
      root,
    );
    expect(scope.explain("repo/src/x.ts")).toEqual({
      path: join(root, "repo", "src", "x.ts"),
      permission: "write",
      allow: { location: "scope.allow[1]", target: join(root, "repo", "src"), permission: "write", recursive: true },
    });
    expect(scope.explain("repo/src/deep/y")).toEqual({
      path: join(root, "repo", "src", "deep", "y"),
      permission: "none",
      allow: { location: "scope.allow[1]", target: join(root, "repo", "src"), permission: "write", recursive: true },
      deny: {
        location: "scope.deny[1]",
        target: join(root, "repo", "src", "deep"),
        permission: "read",
        recursive: false,
      },
    });
    expect(scope.explain("repo/src/deep/a/b").deny?.location).toBe("scope.deny[0]");
    expect(scope.explain("repo/src/deep/a/b").permission).toBe("read");
    expect(scope.explain("outside/secret")).toEqual({ path: join(root, "outside", "secret"), permission: "none" });
    expect(scope.explain("a\0b")).toEqual({ permission: "none" });
  });

  test("explain_agrees_with_permission_at", () => {
    const scope = Scope.fromConfig(
      {
        allow: [{ target: "repo", permission: "write", recursive: false }],
        deny: [{ target: "repo/src", permission: "write" }],
      },
      root,
    );
    for (const p of ["repo", "repo/src", "repo/src/deep", "repo/x", "repo2", "outside/secret", "/"]) {
      expect(scope.explain(p).permission).toBe(scope.permissionAt(p));
    }
    expect(scope.permissionAt("repo/src")).toBe("read");
    expect(scope.permissionAt("repo/src/deep")).toBe("none");
  });
});

describe("explain resolved", () => {
  test("explain_resolved_matches_the_path_as_written_without_following_links", () => {
    symlinkSync(join(root, "outside"), join(root, "repo", "out-link"));
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    // Resolved: the link is a name inside repo; unresolved: it leads outside.
    expect(scope.explain(join(root, "repo", "out-link", "secret"), { resolved: true }).permission).toBe("write");
    expect(scope.explain(join(root, "repo", "out-link", "secret")).permission).toBe("none");
    expect(scope.explain("repo/src", { resolved: true })).toEqual({ permission: "none" });
    expect(scope.explain(`${root}/repo/../outside`, { resolved: true })).toEqual({ permission: "none" });
    expect(scope.explain(`${root}/repo/./x`, { resolved: true })).toEqual({ permission: "none" });
  });

  test("resolved_segments_are_the_path_segments_of_a_canonical_path", () => {
    const segment = fc.oneof(
      fc.constantFrom("", "a", "repo", "..x", ".x", "x.", "é", " "),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), fc.boolean(), (parts, trailing) => {
        const path = `/${parts.join("/")}${trailing ? "/" : ""}`;
        const written = path.includes("\0") || path.split("/").some((part) => part === "." || part === "..");
        if (written) expect(() => resolvedSegments(path)).toThrow();
        else expect(resolvedSegments(path)).toEqual(pathSegments(path));
      }),
      { numRuns: propertyRuns(300, 3000) },
    );
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    const { path: _, ...loose } = scope.explain(`${root}//repo/x/`, { resolved: true });
    const { path: __, ...clean } = scope.explain(`${root}/repo/x`, { resolved: true });
    expect(loose).toEqual(clean);
    expect(clean.permission).toBe("write");
  });
});

describe("rules", () => {
  test("rules_lists_every_allow_and_deny_rule_canonical_in_declaration_order", () => {
    symlinkSync(join(root, "repo"), join(root, "repo-link"));
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo-link", permission: "write" },
          { target: "outside", permission: "read", recursive: false },
        ],
        deny: [{ target: "repo/src", permission: "write" }],
      },
      root,
    );
    expect(scope.rules()).toEqual({
      allow: [
        { location: "scope.allow[0]", target: join(root, "repo"), permission: "write", recursive: true },
        { location: "scope.allow[1]", target: join(root, "outside"), permission: "read", recursive: false },
      ],
      deny: [{ location: "scope.deny[0]", target: join(root, "repo", "src"), permission: "write", recursive: true }],
    });
    expect(Object.isFrozen(scope.rules().allow)).toBe(true);
  });
});
