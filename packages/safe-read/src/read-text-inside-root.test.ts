import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { readTextInsideRoot } from "./read-text-inside-root.ts";
import { resolveRoot } from "./resolved-root.ts";

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

describe("a root resolved once", () => {
  function resolved(dir: string) {
    const result = resolveRoot(dir);
    if (!result.ok) throw new Error(`${dir} did not resolve`);
    return result.value;
  }

  test("gives_the_same_reads_and_refusals_as_a_root_given_by_path", () => {
    writeFileSync(join(root, "a.md"), "a\r\n");
    writeFileSync(join(outside, "secret"), "hunter2");
    symlinkSync(join(outside, "secret"), join(root, "link.md"));
    symlinkSync(outside, join(root, "dir"));
    writeFileSync(join(outside, "x.md"), "x");
    execFileSync("mkfifo", [join(root, "fifo")]);
    writeFileSync(join(root, "big.md"), "x".repeat(20));
    writeFileSync(join(root, "bad.md"), Buffer.from([0x61, 0xff]));
    // The root itself reached through a symlink: both judge against its real path.
    symlinkSync(root, join(base, "alias"));
    const once = resolved(join(base, "alias"));
    expect(once).toEqual({ path: join(base, "alias"), real: root });
    for (const name of ["a.md", "link.md", join("dir", "x.md"), "fifo", "big.md", "bad.md", "nope", "."]) {
      const file = join(base, "alias", name);
      const options = { maxBytes: 10, decode: "lf" } as const;
      const byPath = readTextInsideRoot(file, { ...options, root: join(base, "alias") });
      const byRoot = readTextInsideRoot(file, { ...options, root: once });
      expect(byRoot, name).toEqual(byPath);
    }
  });

  test("judges_every_read_against_the_real_path_it_had_when_resolved", () => {
    // The root swapped for a symlink to elsewhere after it was resolved: nothing is read from there.
    writeFileSync(join(outside, "a.md"), "elsewhere");
    const once = resolved(root);
    renameSync(root, join(base, "moved"));
    symlinkSync(outside, root);
    expect(readTextInsideRoot(join(root, "a.md"), { root: once, maxBytes: 100 })).toMatchObject({
      ok: false,
      reason: "outside-root",
      real: join(outside, "a.md"),
      root,
    });
  });

  test("a_root_built_by_hand_is_resolved_again", () => {
    writeFileSync(join(outside, "secret"), "hunter2");
    symlinkSync(join(outside, "secret"), join(root, "link.md"));
    // A forged `real` that would let the link pass is not believed: the path is resolved.
    const forged = { path: root, real: base };
    expect(readTextInsideRoot(join(root, "link.md"), { root: forged, maxBytes: 100 })).toMatchObject({
      ok: false,
      reason: "outside-root",
      root,
    });
  });

  test("a_root_that_does_not_resolve_is_a_refusal_not_a_throw", () => {
    expect(resolveRoot(join(base, "none"))).toMatchObject({ ok: false, reason: "root-unresolved", errno: "ENOENT" });
  });
});

describe("a regular file taken at its path", () => {
  test("is_placed_by_its_descriptor_before_its_size_is_judged", () => {
    // Outside and too large: outside is what is said, as when the path is resolved first.
    writeFileSync(join(outside, "big.md"), "x".repeat(100));
    symlinkSync(outside, join(root, "dir"));
    expect(readTextInsideRoot(join(root, "dir", "big.md"), { root, maxBytes: 10 })).toMatchObject({
      reason: "outside-root",
      real: join(outside, "big.md"),
    });
    writeFileSync(join(root, "big.md"), "x".repeat(100));
    expect(readTextInsideRoot(join(root, "big.md"), { root, maxBytes: 10 })).toMatchObject({
      reason: "too-large",
      size: 100,
    });
  });

  test("is_read_at_its_real_path_through_a_symlinked_directory_inside_the_root", () => {
    mkdirSync(join(root, "real"));
    writeFileSync(join(root, "real", "a.md"), "a");
    symlinkSync(join(root, "real"), join(root, "alias"));
    expect(readTextInsideRoot(join(root, "alias", "a.md"), { root, maxBytes: 10 })).toMatchObject({
      ok: true,
      value: { file: join(root, "real", "a.md"), text: "a" },
    });
  });

  test("a_relative_path_is_read_from_the_working_directory", () => {
    writeFileSync(join(root, "a.md"), "a");
    const cwd = process.cwd();
    try {
      process.chdir(root);
      expect(readTextInsideRoot("a.md", { root: ".", maxBytes: 10 })).toMatchObject({
        ok: true,
        value: { file: join(root, "a.md") },
      });
    } finally {
      process.chdir(cwd);
    }
  });
});
