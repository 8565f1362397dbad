import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { openedPath, readUpTo } from "./bounded-read.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "bounded-read-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function withFile<T>(bytes: Uint8Array, use: (fd: number, file: string) => T): T {
  const file = join(dir, "f");
  writeFileSync(file, bytes);
  const fd = openSync(file, "r");
  try {
    return use(fd, file);
  } finally {
    closeSync(fd);
  }
}

describe("readUpTo", () => {
  test("reads_the_whole_file_at_or_under_the_cap", () => {
    const bytes = Buffer.from("x".repeat(1000));
    for (const hint of [0, 10, 1000, 5000]) {
      const read = withFile(bytes, (fd) => readUpTo(fd, hint, 1000));
      expect([Buffer.from(read.bytes).equals(bytes), read.cut]).toEqual([true, false]);
    }
    expect(withFile(new Uint8Array(0), (fd) => readUpTo(fd, 0, 10))).toMatchObject({
      cut: false,
      bytes: { length: 0 },
    });
  });

  test("a_file_over_the_cap_is_cut_whatever_the_hint", () => {
    const bytes = Buffer.alloc(1001, 0x61);
    for (const hint of [0, 10, 1000, 1001]) expect(withFile(bytes, (fd) => readUpTo(fd, hint, 1000).cut)).toBe(true);
  });

  test("gives_the_first_max_bytes_and_says_whether_there_was_more", () => {
    const bytes = Buffer.from("0123456789");
    const read = (hint: number, max: number) => withFile(bytes, (fd) => readUpTo(fd, hint, max));
    expect(read(10, 10)).toEqual({ bytes: bytes, cut: false });
    expect(read(0, 4)).toEqual({ bytes: bytes.subarray(0, 4), cut: true });
    expect(read(10, 9)).toEqual({ bytes: bytes.subarray(0, 9), cut: true });
    expect(read(3, 100)).toEqual({ bytes: bytes, cut: false });
  });
});

describe("one read", () => {
  test("a_file_that_grows_past_its_hint_is_read_to_its_end", () => {
    // The hint is the fstat size; the file may have grown since: the buffer grows and the reads go on.
    const bytes = Buffer.from("x".repeat(5000));
    for (const hint of [0, 1, 4999, 5000]) {
      expect(withFile(bytes, (fd) => Buffer.from(readUpTo(fd, hint, 10_000).bytes).equals(bytes))).toBe(true);
      expect(withFile(bytes, (fd) => readUpTo(fd, hint, 4999).cut)).toBe(true);
    }
  });

  test("a_proc_file_that_reports_no_size_is_read_to_its_end", () => {
    // /proc files say size 0 and give short reads long before their end.
    const whole = readFileSync("/proc/self/maps");
    const fd = openSync("/proc/self/maps", "r");
    try {
      const { bytes, cut } = readUpTo(fd, fstatSync(fd).size, 16 * 1024 * 1024);
      expect(cut).toBe(false);
      // The map of this process changes little between two reads: compare sizes loosely.
      expect(bytes.length).toBeGreaterThan(whole.length / 2);
      expect(bytes.length).toBeGreaterThan(4096);
    } finally {
      closeSync(fd);
    }
  });

  test("a_file_that_shrank_below_its_hint_is_what_is_left", () => {
    const bytes = Buffer.from("short");
    expect(withFile(bytes, (fd) => readUpTo(fd, 1000, 2000))).toEqual({ bytes, cut: false });
  });
});

describe("openedPath", () => {
  test("is_the_real_path_of_the_open_file_on_linux", () => {
    const path = withFile(Buffer.from("x"), (fd) => openedPath(fd));
    if (process.platform === "linux") expect(path).toBe(join(dir, "f"));
    else expect(path === undefined || typeof path === "string").toBe(true);
  });
});
