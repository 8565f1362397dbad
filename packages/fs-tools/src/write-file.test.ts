import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Box, byName, makeBox, outcome, scopeWithHook, toolsFor } from "./__fixtures__/tree.ts";
import { snapshot } from "./__fixtures__/watch.ts";
import { fsTools } from "./fs-tools.ts";

let box: Box;
beforeEach(() => {
  box = makeBox();
});
afterEach(() => box.remove());

const writeAll = { allow: [{ target: ".", permission: "write" as const }] };

/** Every name below `dir`, recursively, sorted (links are not followed). */
function tree(dir: string): string[] {
  return [...snapshot(dir).keys()].filter((name) => name !== "").sort();
}

describe("write_file", () => {
  test("write_file_creates_the_file_and_missing_directories", async () => {
    const { write_file } = toolsFor(writeAll, box.root);
    expect(await write_file!.execute({ path: "a/b/c.txt", content: "hé\n" })).toBe(
      `Wrote 4 bytes to ${box.root}/a/b/c.txt (new file).`,
    );
    expect(readFileSync(join(box.root, "a/b/c.txt"), "utf8")).toBe("hé\n");
    expect(tree(box.root)).toEqual(["a", "a/b", "a/b/c.txt"]);
  });

  test("write_file_replaces_a_file_keeping_its_mode_and_leaves_no_temp_file", async () => {
    const file = box.write("x.sh", "old content");
    chmodSync(file, 0o750);
    const { write_file } = toolsFor(writeAll, box.root);
    expect(await write_file!.execute({ path: "x.sh", content: "new" })).toBe(
      `Wrote 3 bytes to ${file} (replaced 11 bytes).`,
    );
    expect(readFileSync(file, "utf8")).toBe("new");
    expect(statSync(file).mode & 0o777).toBe(0o750);
    expect(tree(box.root)).toEqual(["x.sh"]);
  });

  test("write_file_through_a_symlink_inside_the_scope_replaces_the_target", async () => {
    box.write("real.txt", "old");
    symlinkSync("real.txt", join(box.root, "link"));
    const { write_file } = toolsFor(writeAll, box.root);
    expect(await write_file!.execute({ path: "link", content: "new" })).toBe(
      `Wrote 3 bytes to ${box.root}/real.txt (replaced 3 bytes).`,
    );
    expect(readFileSync(join(box.root, "real.txt"), "utf8")).toBe("new");
  });

  test("write_file_in_a_read_only_area_names_the_rule", async () => {
    box.write("docs/a.md", "keep");
    const { write_file } = toolsFor({ allow: [{ target: "docs", permission: "read" }] }, box.root);
    expect(await outcome(write_file!, { path: "docs/a.md", content: "x" })).toEqual({
      ok: false,
      code: "READ_ONLY",
      message: `write_file refused "docs/a.md" (${box.root}/docs/a.md): it is read-only: scope.allow[0] (allow read on ${box.root}/docs) grants read, not write (writable: (none)); nothing was written`,
    });
    expect(readFileSync(join(box.root, "docs/a.md"), "utf8")).toBe("keep");
  });

  test("write_file_under_a_non_recursive_rule_writes_direct_children_only_and_creates_nothing_deeper", async () => {
    box.dir("w");
    const { write_file } = toolsFor({ allow: [{ target: "w", permission: "write", recursive: false }] }, box.root);
    expect(await write_file!.execute({ path: "w/top.txt", content: "1" })).toBe(
      `Wrote 1 bytes to ${box.root}/w/top.txt (new file).`,
    );
    const refused = await outcome(write_file!, { path: "w/sub/deep.txt", content: "2" });
    expect(refused).toEqual({
      ok: false,
      code: "OUTSIDE_SCOPE",
      message: `write_file refused "w/sub/deep.txt" (${box.root}/w/sub/deep.txt): it is outside the scope: the rule on ${box.root}/w is non-recursive (that directory and its direct children only); nothing was accessed`,
    });
    expect(tree(box.root)).toEqual(["w", "w/top.txt"]);
  });

  test("write_file_refuses_a_directory_and_a_fifo_target", async () => {
    box.dir("d");
    box.fifo("p");
    const { write_file } = toolsFor(writeAll, box.root);
    expect(await outcome(write_file!, { path: "d", content: "x" })).toMatchObject({ ok: false, code: "NOT_A_FILE" });
    expect(await outcome(write_file!, { path: "p", content: "x" })).toMatchObject({ ok: false, code: "NOT_A_FILE" });
    expect(statSync(join(box.root, "p")).isFIFO()).toBe(true);
    expect(tree(box.root)).toEqual(["d", "p"]);
  });

  test("write_file_over_the_size_cap_writes_nothing", async () => {
    const { write_file } = toolsFor(writeAll, box.root, { maxWriteBytes: 4 });
    expect(await outcome(write_file!, { path: "x", content: "12345" })).toMatchObject({ ok: false, code: "TOO_LARGE" });
    expect(tree(box.root)).toEqual([]);
  });

  test("write_file_failing_after_the_temp_file_removes_it_and_keeps_the_old_state", async () => {
    // Right after the last check (the temp file's), the target becomes a non-empty directory: the rename must fail.
    const scope = Scope.fromConfig(writeAll, box.root);
    const target = join(box.root, "t.txt");
    const hooked = scopeWithHook(scope, 3, () => {
      mkdirSync(target);
      writeFileSync(join(target, "inner"), "i");
    });
    const { write_file } = byName(fsTools(hooked));
    const result = await outcome(write_file!, { path: "t.txt", content: "x" });
    expect(result).toMatchObject({ ok: false, code: "IO_ERROR" });
    expect(!result.ok && result.message).toContain("the file was left as it was");
    expect(tree(box.root)).toEqual(["t.txt", "t.txt/inner"]);
  });

  test("write_file_in_a_directory_the_os_forbids_is_an_io_error_and_creates_nothing", async () => {
    const locked = box.dir("locked");
    chmodSync(locked, 0o555);
    try {
      const { write_file } = toolsFor(writeAll, box.root);
      const result = await outcome(write_file!, { path: "locked/x", content: "x" });
      // root ignores the mode bits; everyone else gets a refusal.
      if (process.getuid?.() === 0) expect(result.ok).toBe(true);
      else {
        expect(result).toMatchObject({ ok: false, code: "IO_ERROR" });
        expect(readdirSync(locked)).toEqual([]);
      }
    } finally {
      chmodSync(locked, 0o755);
    }
  });
});

describe("edit_file", () => {
  test("edit_file_replaces_the_unique_occurrence", async () => {
    const file = box.write("a.ts", "const a = 1;\nconst b = 2;\n");
    const { edit_file } = toolsFor(writeAll, box.root);
    expect(await edit_file!.execute({ path: "a.ts", old_string: "b = 2", new_string: "b = 3" })).toBe(
      `Edited ${file}: replaced 1 occurrence at line 2 (26 → 26 bytes).`,
    );
    expect(readFileSync(file, "utf8")).toBe("const a = 1;\nconst b = 3;\n");
    expect(tree(box.root)).toEqual(["a.ts"]);
  });

  test("edit_file_absent_string_is_no_match", async () => {
    const file = box.write("a.ts", "abc\n");
    const { edit_file } = toolsFor(writeAll, box.root);
    expect(await outcome(edit_file!, { path: "a.ts", old_string: "xyz", new_string: "q" })).toEqual({
      ok: false,
      code: "NO_MATCH",
      message: `edit_file: old_string was not found in "a.ts" (${file}) (it must match exactly, whitespace included; read the file again and copy the text); nothing was written`,
    });
    expect(readFileSync(file, "utf8")).toBe("abc\n");
  });

  test("edit_file_repeated_string_is_not_unique_and_lists_the_lines", async () => {
    const file = box.write("a.ts", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
    const { edit_file } = toolsFor(writeAll, box.root);
    expect(await outcome(edit_file!, { path: "a.ts", old_string: "x = 1", new_string: "x = 0" })).toEqual({
      ok: false,
      code: "NOT_UNIQUE",
      message: `edit_file: old_string occurs 3 times in "a.ts" (${file}) (at lines 1, 3, 5); include more surrounding text so it occurs exactly once; nothing was written`,
    });
    expect(await outcome(edit_file!, { path: "a.ts", old_string: "1\n\n", new_string: "1\n" })).toMatchObject({
      ok: true,
    });
  });

  test("edit_file_overlapping_occurrences_are_not_unique", async () => {
    box.write("a.txt", "aaa");
    const { edit_file } = toolsFor(writeAll, box.root);
    expect(await outcome(edit_file!, { path: "a.txt", old_string: "aa", new_string: "b" })).toMatchObject({
      ok: false,
      code: "NOT_UNIQUE",
    });
  });

  test("edit_file_refuses_same_strings_missing_files_binary_and_read_only", async () => {
    box.write("bin", Buffer.from([1, 0, 2]));
    box.write("ro/a.txt", "abc");
    const { edit_file } = toolsFor(
      { allow: [{ target: ".", permission: "write" }], deny: [{ target: "ro", permission: "write" }] },
      box.root,
    );
    expect(await outcome(edit_file!, { path: "bin", old_string: "a", new_string: "a" })).toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(await outcome(edit_file!, { path: "none.txt", old_string: "a", new_string: "b" })).toMatchObject({
      code: "NOT_FOUND",
    });
    expect(await outcome(edit_file!, { path: "bin", old_string: "a", new_string: "b" })).toMatchObject({
      code: "NOT_TEXT",
    });
    const ro = await outcome(edit_file!, { path: "ro/a.txt", old_string: "a", new_string: "b" });
    expect(ro).toMatchObject({ code: "READ_ONLY" });
    expect(!ro.ok && ro.message).toContain(`scope.deny[0] (deny write on ${box.root}/ro) takes write away`);
    expect(readFileSync(join(box.root, "ro/a.txt"), "utf8")).toBe("abc");
    expect(existsSync(join(box.root, "none.txt"))).toBe(false);
  });

  test("edit_file_refuses_a_file_over_the_size_cap", async () => {
    box.write("big.txt", "0123456789");
    const { edit_file } = toolsFor(writeAll, box.root, { maxFileBytes: 5 });
    expect(await outcome(edit_file!, { path: "big.txt", old_string: "0", new_string: "x" })).toMatchObject({
      code: "TOO_LARGE",
    });
    expect(readFileSync(join(box.root, "big.txt"), "utf8")).toBe("0123456789");
  });
});

describe("abort", () => {
  test("a cancelled turn's signal stops every file tool before it reads or writes", async () => {
    box.write("a.txt", "old\n");
    const tools = toolsFor(writeAll, box.root);
    const controller = new AbortController();
    controller.abort(new Error("client went away"));
    const { signal } = controller;
    for (const [name, input] of [
      ["read_file", { path: "a.txt" }],
      ["list_dir", { path: "." }],
      ["write_file", { path: "a.txt", content: "new\n" }],
      ["edit_file", { path: "a.txt", old_string: "old", new_string: "new" }],
    ] as const) {
      await expect(Promise.resolve().then(() => tools[name]!.execute(input, { signal }))).rejects.toMatchObject({
        code: "ABORTED",
        tool: name,
      });
    }
    expect(readFileSync(join(box.root, "a.txt"), "utf8")).toBe("old\n");
    expect(tree(box.root)).toEqual(["a.txt"]);
  });
});
