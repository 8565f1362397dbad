import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { readSmallFile } from "./read-small-file.ts";

let base: string;
let workspace: string;
let home: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "safe-read-small-")));
  workspace = join(base, "workspace");
  home = join(base, "home");
  mkdirSync(workspace);
  mkdirSync(home);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe("readSmallFile", () => {
  test("without_within_a_file_anywhere_is_read_through_symlinks", () => {
    writeFileSync(join(home, "key.txt"), "sk-home\n");
    symlinkSync(join(home, "key.txt"), join(workspace, "link.txt"));
    for (const path of [join(home, "key.txt"), join(workspace, "link.txt")]) {
      expect(readSmallFile(path, { maxBytes: 64 })).toMatchObject({
        ok: true,
        value: { file: join(home, "key.txt"), text: "sk-home\n" },
      });
    }
  });

  test("with_within_a_file_inside_is_read_and_a_symlink_out_of_it_is_refused_unread", () => {
    writeFileSync(join(workspace, "key.txt"), "sk-inside");
    writeFileSync(join(home, ".git-credentials"), "user:token@host");
    symlinkSync(join(home, ".git-credentials"), join(workspace, "committed-link.txt"));
    expect(readSmallFile(join(workspace, "key.txt"), { maxBytes: 64, within: workspace })).toMatchObject({
      ok: true,
      value: { text: "sk-inside" },
    });
    const read = readSmallFile(join(workspace, "committed-link.txt"), { maxBytes: 64, within: workspace });
    expect(read).toMatchObject({ ok: false, reason: "outside-root", real: join(home, ".git-credentials") });
    expect("bytes" in read).toBe(false);
    expect(
      readSmallFile(join(workspace, "..", "home", ".git-credentials"), { maxBytes: 64, within: workspace }),
    ).toMatchObject({ ok: false, reason: "outside-root" });
  });

  test("a_fifo_is_refused_without_being_opened_so_nothing_hangs", () => {
    for (const within of [undefined, workspace]) {
      const fifo = join(workspace, `fifo-${within === undefined ? "anywhere" : "inside"}`);
      execFileSync("mkfifo", [fifo]);
      expect(readSmallFile(fifo, { maxBytes: 64, within })).toMatchObject({ ok: false, reason: "not-a-file" });
    }
  });

  test("a_directory_the_root_itself_or_a_device_is_not_a_file", () => {
    mkdirSync(join(workspace, "dir"));
    expect(readSmallFile(join(workspace, "dir"), { maxBytes: 64 })).toMatchObject({ reason: "not-a-file" });
    expect(readSmallFile(workspace, { maxBytes: 64, within: workspace })).toMatchObject({ reason: "not-a-file" });
    expect(readSmallFile("/dev/zero", { maxBytes: 64 })).toMatchObject({ reason: "not-a-file" });
  });

  test("a_file_over_max_bytes_is_refused_and_one_at_it_is_read", () => {
    writeFileSync(join(home, "huge.txt"), "k".repeat(64 * 1024 + 1));
    writeFileSync(join(home, "full.txt"), "k".repeat(64 * 1024));
    expect(readSmallFile(join(home, "huge.txt"), { maxBytes: 64 * 1024 })).toMatchObject({
      ok: false,
      reason: "too-large",
      size: 64 * 1024 + 1,
    });
    const full = readSmallFile(join(home, "full.txt"), { maxBytes: 64 * 1024 });
    expect(full.ok && full.value.text.length).toBe(64 * 1024);
  });

  test("a_missing_file_or_dangling_symlink_is_missing_and_bytes_are_left_undecoded_on_request", () => {
    symlinkSync(join(home, "gone"), join(workspace, "dangling"));
    expect(readSmallFile(join(home, "nothing"), { maxBytes: 64 })).toMatchObject({
      reason: "missing",
      dangling: false,
    });
    expect(readSmallFile(join(workspace, "dangling"), { maxBytes: 64, within: workspace })).toMatchObject({
      reason: "missing",
      dangling: true,
    });
    writeFileSync(join(home, "latin1.txt"), Buffer.from([0x6b, 0xe9]));
    expect(readSmallFile(join(home, "latin1.txt"), { maxBytes: 64 })).toMatchObject({ reason: "not-utf8" });
    const bytes = readSmallFile(join(home, "latin1.txt"), { maxBytes: 64, decode: "bytes" });
    expect(bytes.ok && [...bytes.value.bytes]).toEqual([0x6b, 0xe9]);
  });
});
