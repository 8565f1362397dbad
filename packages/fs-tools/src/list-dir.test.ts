import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Box, makeBox, outcome, toolsFor } from "./__fixtures__/tree.ts";

let box: Box;
beforeEach(() => {
  box = makeBox();
});
afterEach(() => box.remove());

describe("list_dir", () => {
  test("list_dir_sorts_entries_and_names_their_kind", async () => {
    box.write("repo/b.txt", "12345");
    box.write("repo/A.md", "");
    box.dir("repo/src");
    box.fifo("repo/pipe");
    symlinkSync("b.txt", join(box.root, "repo", "link"));
    symlinkSync("/dev/null", join(box.root, "repo", "null"));
    const { list_dir } = toolsFor({ allow: [{ target: "repo", permission: "read" }] }, box.root);
    expect(await list_dir!.execute({ path: "repo" })).toBe(
      [
        `${box.root}/repo: 6 entries`,
        "file    A.md (0 bytes)",
        "file    b.txt (5 bytes)",
        "symlink link -> b.txt",
        "symlink null -> /dev/null",
        "fifo    pipe",
        "dir     src/",
      ].join("\n"),
    );
  });

  test("list_dir_caps_entries_with_a_note", async () => {
    for (let i = 0; i < 5; i += 1) box.write(`d/f${i}`, "");
    const { list_dir } = toolsFor({ allow: [{ target: ".", permission: "read" }] }, box.root, { maxEntries: 2 });
    expect(await list_dir!.execute({ path: "d" })).toBe(
      [
        `${box.root}/d: 5 entries`,
        "file    f0 (0 bytes)",
        "file    f1 (0 bytes)",
        "[truncated: 3 more entries not shown (the limit is 2)]",
      ].join("\n"),
    );
  });

  test("list_dir_quotes_names_with_control_characters", async () => {
    box.write("d/evil\nfile    fake", "");
    const { list_dir } = toolsFor({ allow: [{ target: ".", permission: "read" }] }, box.root);
    expect(await list_dir!.execute({ path: "d" })).toBe(
      `${box.root}/d: 1 entry\nfile    "evil\\nfile    fake" (0 bytes)`,
    );
  });

  test("list_dir_refuses_a_file_and_a_missing_directory", async () => {
    box.write("f.txt", "x");
    const { list_dir } = toolsFor({ allow: [{ target: ".", permission: "read" }] }, box.root);
    expect(await outcome(list_dir!, { path: "f.txt" })).toMatchObject({ ok: false, code: "NOT_A_DIRECTORY" });
    expect(await outcome(list_dir!, { path: "missing" })).toMatchObject({ ok: false, code: "NOT_FOUND" });
  });

  test("list_dir_of_a_subdirectory_under_a_non_recursive_rule_is_refused", async () => {
    box.write("notes/a.md", "");
    box.write("notes/sub/hidden.md", "");
    const { list_dir } = toolsFor({ allow: [{ target: "notes", permission: "read", recursive: false }] }, box.root);
    expect(await list_dir!.execute({ path: "notes" })).toBe(
      `${box.root}/notes: 2 entries\nfile    a.md (0 bytes)\ndir     sub/`,
    );
    const refused = await outcome(list_dir!, { path: "notes/sub" });
    expect(refused).toMatchObject({ ok: false, code: "OUTSIDE_SCOPE" });
    expect(!refused.ok && refused.message).toBe(
      `list_dir refused "notes/sub" (${box.root}/notes/sub): the rule that covers it is non-recursive (it covers ${box.root}/notes and that directory's direct children only, not the entries of ${box.root}/notes/sub); nothing was listed`,
    );
  });

  test("list_dir_of_a_denied_directory_names_the_deny_rule", async () => {
    box.write("repo/secret/key", "k");
    const { list_dir } = toolsFor(
      { allow: [{ target: "repo", permission: "write" }], deny: [{ target: "repo/secret", permission: "read" }] },
      box.root,
    );
    const refused = await outcome(list_dir!, { path: "repo/secret" });
    expect(refused).toEqual({
      ok: false,
      code: "OUTSIDE_SCOPE",
      message: `list_dir refused "repo/secret" (${box.root}/repo/secret): it is denied by scope.deny[0] (deny read on ${box.root}/repo/secret); nothing was accessed`,
    });
  });
});
