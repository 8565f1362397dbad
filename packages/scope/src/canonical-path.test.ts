import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { canonicalPath } from "./canonical-path.ts";
import { ScopeError } from "./scope-error.ts";

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "scope-canonical-")));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

// Paths with `..` are written as strings: path.join would apply `..` lexically.
describe("canonicalPath", () => {
  test("existing_path_is_its_realpath", () => {
    mkdirSync(join(root, "a", "b"), { recursive: true });
    expect(canonicalPath(`${root}/a/./b/`)).toBe(join(root, "a", "b"));
  });

  test("relative_path_resolves_against_base", () => {
    mkdirSync(join(root, "a"));
    expect(canonicalPath("a/x.txt", root)).toBe(join(root, "a", "x.txt"));
    expect(canonicalPath("", root)).toBe(root);
    expect(canonicalPath(".", root)).toBe(root);
  });

  test("relative_path_without_base_resolves_against_cwd", () => {
    expect(canonicalPath("no-such-dir-xyz/f")).toBe(join(realpathSync(process.cwd()), "no-such-dir-xyz", "f"));
  });

  test("missing_tail_is_appended_to_the_real_ancestor", () => {
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "link"));
    expect(canonicalPath(join(root, "link", "new", "deeper.txt"))).toBe(join(root, "real", "new", "deeper.txt"));
  });

  test("dotdot_applies_after_the_symlink_before_it", () => {
    mkdirSync(join(root, "a"));
    mkdirSync(join(root, "other", "deep"), { recursive: true });
    symlinkSync(join(root, "other", "deep"), join(root, "a", "link"));
    // POSIX: a/link/.. is the parent of link's target, not a/.
    expect(canonicalPath(`${root}/a/link/../x`)).toBe(join(root, "other", "x"));
    expect(canonicalPath("a/link/../x", root)).toBe(join(root, "other", "x"));
  });

  test("dotdot_after_a_missing_part_resumes_symlink_resolution", () => {
    mkdirSync(join(root, "out"));
    mkdirSync(join(root, "in"));
    symlinkSync(join(root, "out"), join(root, "in", "link"));
    expect(canonicalPath(`${root}/in/missing/../link/f`)).toBe(join(root, "out", "f"));
  });

  test("dotdot_never_climbs_above_the_root", () => {
    expect(canonicalPath("/../../..")).toBe("/");
    expect(canonicalPath("/../../tmp/../")).toBe("/");
  });

  test("dangling_symlink_resolves_to_its_target", () => {
    mkdirSync(join(root, "target-dir"));
    symlinkSync(join(root, "target-dir", "not-yet"), join(root, "dangling"));
    expect(canonicalPath(join(root, "dangling"))).toBe(join(root, "target-dir", "not-yet"));
    expect(canonicalPath(join(root, "dangling", "child"))).toBe(join(root, "target-dir", "not-yet", "child"));
  });

  test("relative_symlink_target_resolves_from_the_links_directory", () => {
    mkdirSync(join(root, "a", "b"), { recursive: true });
    mkdirSync(join(root, "c"));
    symlinkSync("../../c", join(root, "a", "b", "rel"));
    expect(canonicalPath(join(root, "a", "b", "rel", "f"))).toBe(join(root, "c", "f"));
  });

  test("chained_symlinks_are_followed", () => {
    mkdirSync(join(root, "end"));
    symlinkSync(join(root, "end"), join(root, "l1"));
    symlinkSync("l1", join(root, "l2"));
    symlinkSync(join(root, "l2"), join(root, "l3"));
    expect(canonicalPath(`${root}/l3/x/../y`)).toBe(join(root, "end", "y"));
  });

  test("path_below_a_regular_file_is_kept_lexically", () => {
    writeFileSync(join(root, "file"), "x");
    expect(canonicalPath(join(root, "file", "child"))).toBe(join(root, "file", "child"));
    expect(canonicalPath(`${root}/file/..`)).toBe(root);
  });

  test("symlink_loop_is_an_error_not_a_hang", () => {
    symlinkSync(join(root, "b"), join(root, "a"));
    symlinkSync(join(root, "a"), join(root, "b"));
    symlinkSync("self", join(root, "self"));
    for (const p of [join(root, "a"), join(root, "a", "x"), join(root, "self", "y")]) {
      let caught: unknown;
      try {
        canonicalPath(p);
      } catch (error) {
        caught = error;
      }
      expect(ScopeError.is(caught)).toBe(true);
      expect((caught as ScopeError).code).toBe("SYMLINK_LOOP");
      expect((caught as ScopeError).path).toBe(p);
    }
  });

  test("nul_byte_is_invalid_path", () => {
    expect(() => canonicalPath(`${root}/a\0b`)).toThrowError(expect.objectContaining({ code: "INVALID_PATH" }));
    expect(() => canonicalPath("a", "/x\0")).toThrowError(expect.objectContaining({ code: "INVALID_PATH" }));
  });
});
