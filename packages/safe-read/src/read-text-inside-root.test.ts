import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { readTextInsideRoot } from "./read-text-inside-root.ts";

let base: string;
let root: string;
let outside: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "safe-read-")));
  root = join(base, "root");
  outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(outside);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe("readTextInsideRoot", () => {
  test("reads_a_file_inside_its_root_with_one_bom_dropped", () => {
    writeFileSync(join(root, "a.md"), "\ufeffone\r\ntwo\n");
    const read = readTextInsideRoot(join(root, "a.md"), { root, maxBytes: 100 });
    expect(read).toMatchObject({ ok: true, value: { file: join(root, "a.md"), text: "one\r\ntwo\n", cut: false } });
    const lf = readTextInsideRoot(join(root, "a.md"), { root, maxBytes: 100, decode: "lf" });
    expect(lf.ok && lf.value.text).toBe("one\ntwo\n");
  });

  test("a_symlink_out_of_the_root_is_outside_root_and_never_read", () => {
    writeFileSync(join(outside, "secret"), "hunter2");
    symlinkSync(join(outside, "secret"), join(root, "link.md"));
    const read = readTextInsideRoot(join(root, "link.md"), { root, maxBytes: 100 });
    expect(read).toMatchObject({ ok: false, reason: "outside-root", real: join(outside, "secret"), root });
  });

  test("a_symlinked_directory_out_of_the_root_is_outside_root", () => {
    writeFileSync(join(outside, "x.md"), "x");
    symlinkSync(outside, join(root, "dir"));
    expect(readTextInsideRoot(join(root, "dir", "x.md"), { root, maxBytes: 100 })).toMatchObject({
      ok: false,
      reason: "outside-root",
    });
  });

  test("the_root_itself_counts_only_with_or_same", () => {
    writeFileSync(join(base, "f"), "f");
    expect(readTextInsideRoot(join(base, "f"), { root: join(base, "f"), maxBytes: 10 })).toMatchObject({
      reason: "outside-root",
    });
    expect(
      readTextInsideRoot(join(base, "f"), { root: join(base, "f"), maxBytes: 10, inside: "or-same" }),
    ).toMatchObject({ ok: true });
  });

  test("is_readable_is_asked_with_the_real_path", () => {
    writeFileSync(join(root, "a.md"), "a");
    const asked: string[] = [];
    const read = readTextInsideRoot(join(root, "a.md"), {
      root,
      maxBytes: 10,
      isReadable: (path) => {
        asked.push(path);
        return false;
      },
    });
    expect(read).toMatchObject({ ok: false, reason: "outside-readable", real: join(root, "a.md") });
    expect(asked).toEqual([join(root, "a.md")]);
  });

  test("a_fifo_or_directory_is_not_a_file_and_never_opened", () => {
    execFileSync("mkfifo", [join(root, "fifo")]);
    mkdirSync(join(root, "dir"));
    for (const name of ["fifo", "dir"]) {
      const read = readTextInsideRoot(join(root, name), { root, maxBytes: 10 });
      expect(read.ok ? undefined : read.reason).toBe("not-a-file");
    }
  });

  test("missing_and_dangling_are_told_apart", () => {
    symlinkSync(join(root, "nowhere"), join(root, "dangling"));
    expect(readTextInsideRoot(join(root, "nope"), { root, maxBytes: 10 })).toMatchObject({
      reason: "missing",
      dangling: false,
    });
    expect(readTextInsideRoot(join(root, "dangling"), { root, maxBytes: 10 })).toMatchObject({
      reason: "missing",
      dangling: true,
    });
    symlinkSync("loop", join(root, "loop"));
    expect(readTextInsideRoot(join(root, "loop"), { root, maxBytes: 10 })).toMatchObject({
      reason: "unresolved",
      errno: "ELOOP",
    });
    expect(readTextInsideRoot(join(root, "x"), { root: join(base, "none"), maxBytes: 10 })).toMatchObject({
      reason: "root-unresolved",
      errno: "ENOENT",
    });
  });

  test("over_the_cap_is_refused_or_cut_at_a_character", () => {
    writeFileSync(join(root, "big.md"), "ab\u{1F600}cd");
    expect(readTextInsideRoot(join(root, "big.md"), { root, maxBytes: 4 })).toMatchObject({
      reason: "too-large",
      size: 8,
    });
    const cut = readTextInsideRoot(join(root, "big.md"), { root, maxBytes: 4, overLimit: "cut" });
    expect(cut).toMatchObject({ ok: true, value: { text: "ab", textBytes: 2, cut: true, size: 8 } });
  });

  test("bad_utf8_says_where", () => {
    writeFileSync(join(root, "bad.md"), Buffer.from([0x61, 0x0a, 0x62, 0xff]));
    expect(readTextInsideRoot(join(root, "bad.md"), { root, maxBytes: 10 })).toMatchObject({
      reason: "not-utf8",
      byteOffset: 3,
      line: 2,
      column: 2,
    });
    const bytes = readTextInsideRoot(join(root, "bad.md"), { root, maxBytes: 10, decode: "bytes" });
    expect(bytes.ok && [...bytes.value.bytes]).toEqual([0x61, 0x0a, 0x62, 0xff]);
  });

  test("with_symlinks_refused_a_link_is_not_a_file", () => {
    writeFileSync(join(root, "a.md"), "a");
    symlinkSync(join(root, "a.md"), join(root, "link.md"));
    const read = readTextInsideRoot(join(root, "link.md"), { root, maxBytes: 10, symlinks: "refuse" });
    expect(read.ok === false && read.reason === "not-a-file" && read.stats.isSymbolicLink()).toBe(true);
    expect(readTextInsideRoot(join(root, "a.md"), { root, maxBytes: 10, symlinks: "refuse" })).toMatchObject({
      ok: true,
      value: { text: "a" },
    });
  });
});
