import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { Scope } from "./scope.ts";

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "scope-summary-")));
  mkdirSync(join(root, "repo"));
  mkdirSync(join(root, "local"));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("Scope.summary", () => {
  test("summary_lists_readable_and_writable", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "local", permission: "read" },
          { target: "repo", permission: "write" },
        ],
      },
      root,
    );
    expect(scope.summary()).toBe(
      ["Readable:", `  - ${root}/local`, `  - ${root}/repo`, "Writable:", `  - ${root}/repo`].join("\n"),
    );
  });

  test("summary_excludes_deny_rules", () => {
    const scope = Scope.fromConfig(
      {
        allow: [{ target: "repo", permission: "write" }],
        deny: [
          { target: "repo/.git", permission: "write" },
          { target: "repo/secrets", permission: "read" },
        ],
      },
      root,
    );
    const summary = scope.summary();
    expect(summary).toBe(["Readable:", `  - ${root}/repo`, "Writable:", `  - ${root}/repo`].join("\n"));
    expect(summary).not.toContain(".git");
    expect(summary).not.toContain("secrets");
  });

  test("scope_summary_marks_non_recursive_rules", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "local", permission: "read", recursive: false },
          { target: "repo", permission: "write" },
          { target: "repo/sub", permission: "write", recursive: false },
        ],
      },
      root,
    );
    expect(scope.summary()).toBe(
      [
        "Readable:",
        `  - ${root}/local [non-recursive]`,
        `  - ${root}/repo`,
        `  - ${root}/repo/sub [non-recursive]`,
        "Writable:",
        `  - ${root}/repo`,
        `  - ${root}/repo/sub [non-recursive]`,
      ].join("\n"),
    );
  });

  test("empty_list_shows_none", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "local", permission: "read" }] }, root);
    expect(scope.summary()).toBe(["Readable:", `  - ${root}/local`, "Writable:", "  (none)"].join("\n"));
  });

  test("both_lists_empty_when_deny_removes_everything", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "write" }], deny: [{ target: root, permission: "read" }] },
      root,
    );
    expect(scope.summary()).toBe(["Readable:", "  (none)", "Writable:", "  (none)"].join("\n"));
    expect(scope.readable).toEqual([]);
  });

  test("deny_write_moves_a_write_rule_to_readable_only", () => {
    const scope = Scope.fromConfig(
      { allow: [{ target: "repo", permission: "write" }], deny: [{ target: "repo", permission: "write" }] },
      root,
    );
    expect(scope.summary()).toBe(["Readable:", `  - ${root}/repo`, "Writable:", "  (none)"].join("\n"));
  });

  test("duplicate_target_is_listed_once_recursive_if_any_rule_is", () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "repo", permission: "read", recursive: false },
          { target: `${root}/repo`, permission: "read" },
        ],
      },
      root,
    );
    expect(scope.summary()).toBe(["Readable:", `  - ${root}/repo`, "Writable:", "  (none)"].join("\n"));
  });

  test("summary_has_no_trailing_newline", () => {
    const scope = Scope.fromConfig({ allow: [{ target: "repo", permission: "write" }] }, root);
    expect(scope.summary().endsWith("\n")).toBe(false);
    expect(scope.toData().summary).toBe(scope.summary());
  });
});
