import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Box, makeBox, outcome, toolsFor } from "./__fixtures__/tree.ts";

let box: Box;
beforeEach(() => {
  box = makeBox();
});
afterEach(() => box.remove());

const readAll = { allow: [{ target: ".", permission: "read" as const }] };

describe("read_file", () => {
  test("read_file_returns_the_text_as_it_is", async () => {
    box.write("a.txt", "one\n  two\tx\nthree\n");
    const { read_file } = toolsFor(readAll, box.root);
    expect(await read_file!.execute({ path: "a.txt" })).toBe("one\n  two\tx\nthree\n");
  });

  test("read_file_offset_and_limit_pick_lines_and_say_how_to_go_on", async () => {
    box.write("a.txt", "1\n2\n3\n4\n5");
    const { read_file } = toolsFor(readAll, box.root);
    expect(await read_file!.execute({ path: "a.txt", offset: 2, limit: 2 })).toBe(
      "2\n3\n[truncated: showed lines 2-3; more lines follow: call read_file with offset 4]",
    );
    expect(await read_file!.execute({ path: "a.txt", offset: 5 })).toBe("5");
    expect(await read_file!.execute({ path: "a.txt", offset: 4, limit: 2 })).toBe("4\n5");
    expect(await read_file!.execute({ path: "a.txt", offset: 9 })).toBe(
      `[${box.root}/a.txt has 5 lines; offset 9 is past the end]`,
    );
  });

  test("read_file_default_limit_truncates_with_a_visible_note", async () => {
    box.write("many.txt", Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join("\n"));
    const { read_file } = toolsFor(readAll, box.root, { defaultLineLimit: 10 });
    const text = await read_file!.execute({ path: "many.txt" });
    expect(text).toBe(
      `${Array.from({ length: 10 }, (_, i) => `l${i + 1}\n`).join("")}[truncated: showed lines 1-10; more lines follow: call read_file with offset 11]`,
    );
  });

  test("read_file_output_cap_cuts_at_a_line_with_a_note", async () => {
    box.write("big.txt", `${"x".repeat(50)}\n`.repeat(100));
    const { read_file } = toolsFor(readAll, box.root, { maxOutputBytes: 200 });
    expect(await read_file!.execute({ path: "big.txt" })).toBe(
      `${`${"x".repeat(50)}\n`.repeat(3)}[truncated: output limit of 200 bytes reached after line 3; call read_file with offset 4 to read on]`,
    );
    expect(await read_file!.execute({ path: "big.txt", offset: 99 })).toBe(`${"x".repeat(50)}\n`.repeat(2));
  });

  test("read_file_line_longer_than_the_output_cap_shows_its_start_with_a_note", async () => {
    box.write("long.txt", `${"é".repeat(30)}\nshort\n`);
    const { read_file } = toolsFor(readAll, box.root, { maxOutputBytes: 11 });
    expect(await read_file!.execute({ path: "long.txt" })).toBe(
      `${"é".repeat(5)}\n[truncated: line 1 is longer than the output limit of 11 bytes; only its start is shown]`,
    );
  });

  test("read_file_file_over_the_size_cap_is_truncated_with_a_note", async () => {
    box.write("huge.txt", "abc\ndef\nghi\n");
    const { read_file } = toolsFor(readAll, box.root, { maxFileBytes: 6 });
    expect(await read_file!.execute({ path: "huge.txt" })).toBe(
      `abc\n[truncated: ${box.root}/huge.txt is 12 bytes; read_file reads only its first 6 bytes]`,
    );
  });

  test("read_file_cut_inside_a_multibyte_character_is_still_text", async () => {
    box.write("utf.txt", "é\néé\n");
    const { read_file } = toolsFor(readAll, box.root, { maxFileBytes: 4 });
    expect(await read_file!.execute({ path: "utf.txt" })).toBe(
      `é\n[truncated: ${box.root}/utf.txt is 8 bytes; read_file reads only its first 4 bytes]`,
    );
  });

  test("read_file_empty_file_says_so", async () => {
    box.write("empty.txt", "");
    const { read_file } = toolsFor(readAll, box.root);
    expect(await read_file!.execute({ path: "empty.txt" })).toBe(`[${box.root}/empty.txt is empty]`);
  });

  test("read_file_refuses_binary_and_non_utf8_files", async () => {
    box.write("bin", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
    box.write("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const { read_file } = toolsFor(readAll, box.root);
    expect(await outcome(read_file!, { path: "bin" })).toEqual({
      ok: false,
      code: "NOT_TEXT",
      message: `read_file refused "bin" (${box.root}/bin): it looks binary (a NUL byte at offset 4); read_file works on UTF-8 text files only`,
    });
    expect(await outcome(read_file!, { path: "latin1.txt" })).toEqual({
      ok: false,
      code: "NOT_TEXT",
      message: `read_file refused "latin1.txt" (${box.root}/latin1.txt): it is not valid UTF-8 text; read_file works on UTF-8 text files only`,
    });
  });

  test("read_file_refuses_a_directory_and_points_to_list_dir", async () => {
    box.dir("sub");
    const { read_file } = toolsFor(readAll, box.root);
    const result = await outcome(read_file!, { path: "sub" });
    expect(result).toMatchObject({ ok: false, code: "NOT_A_FILE" });
    expect(!result.ok && result.message).toContain("a directory; use list_dir for a directory");
  });

  test("read_file_missing_file_is_not_found_with_the_path", async () => {
    const { read_file } = toolsFor(readAll, box.root);
    expect(await outcome(read_file!, { path: "nope.txt" })).toEqual({
      ok: false,
      code: "NOT_FOUND",
      message: `read_file: there is no file at "nope.txt" (${box.root}/nope.txt)`,
    });
    expect(await outcome(read_file!, { path: "no/dir/x" })).toMatchObject({ ok: false, code: "NOT_FOUND" });
  });

  test("read_file_absolute_paths_and_dot_dot_inside_the_scope_work", async () => {
    box.write("a/b.txt", "b\n");
    box.dir("c");
    const { read_file } = toolsFor(readAll, box.root);
    expect(await read_file!.execute({ path: `${box.root}/a/b.txt` })).toBe("b\n");
    expect(await read_file!.execute({ path: "c/../a/./b.txt" })).toBe("b\n");
  });

  test("read_file_keeps_carriage_returns_and_a_missing_final_newline", async () => {
    box.write("crlf.txt", "a\r\nb");
    const { read_file } = toolsFor(readAll, box.root);
    expect(await read_file!.execute({ path: "crlf.txt" })).toBe("a\r\nb");
  });
});
