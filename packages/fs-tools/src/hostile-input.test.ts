import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Scope } from "@insomnia/scope";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { guarded } from "../../../test/support/output-guard.ts";
import { byName } from "./__fixtures__/tree.ts";
import { changes, snapshot } from "./__fixtures__/watch.ts";
import { fsTools } from "./fs-tools.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// ≥ 100,000 generated calls over a tree with symlinks in and out, nested allow/deny and
// non-recursive rules, while a second process swaps symlinks (and a directory for a
// symlink) as fast as it can. The oracle is the file system, not the tools' answers:
// every directory outside the scope is snapshotted (content hash, inode, size, mtime,
// mode, entries) before and compared after; every file that must stay unread holds a
// canary no output may contain, and every such directory a marker file no listing may show.

/** FS_TOOLS_HOSTILE_CALLS runs a smaller suite while debugging; the default is the promise. */
const CALLS = Number(process.env["FS_TOOLS_HOSTILE_CALLS"] ?? propertyRuns(2_000, 100_000));
const STREAMS = 4;
const CANARY = "CANARY-7f3a";
/** A file name in every unreadable directory; no generated path uses it, so a listing that shows it leaked. */
const MARKER = "marker-q8zv";

/** tmpfs when there is one: fsync there costs nothing, so the suite measures paths, not disks. */
function scratch(): string {
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  return realpathSync(mkdtempSync(join(base, "fs-tools-hostile-")));
}

let root: string;
let pwd: string;
let swapper: ChildProcess | undefined;

function put(relative: string, content: string): void {
  const file = join(root, relative);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

function link(target: string, at: string): void {
  symlinkSync(target, join(root, at));
}

/** Directories no call may change (writes) — the first four also hold canaries no call may read. */
const WATCHED = ["outside", "pwd/hidden", "pwd/rw/secret", "pwd/nr/deep", "pwd/ro", "pwd/rw/ro"];

beforeAll(() => {
  root = scratch();
  pwd = join(root, "pwd");
  put("outside/target.txt", `${CANARY} outside target\nline one\nshared\n`);
  put("outside/leak-1.txt", `${CANARY} outside 1\n`);
  put("outside/sub/leak-2.txt", `${CANARY} outside 2\n`);
  put("pwd/hidden/leak-3.txt", `${CANARY} hidden\n`);
  put("pwd/rw/secret/leak-4.txt", `${CANARY} denied read\nline one\n`);
  put("pwd/nr/deep/leak-5.txt", `${CANARY} below a non-recursive rule\n`);
  for (const dir of ["outside", "outside/sub", "pwd/hidden", "pwd/rw/secret", "pwd/nr/deep"]) {
    put(`${dir}/${MARKER}`, `${CANARY} marker\n`);
  }
  put("pwd/ro/r.txt", "readable, never written\nline one\nshared\n");
  put("pwd/rw/ro/r.txt", "readable under a write deny\nline one\n");
  put("pwd/rw/a.txt", "line one\nline two\nshared\nshared\n");
  put("pwd/rw/b.txt", "line one\n");
  put("pwd/rw/sub/c.txt", "line one\nshared\n");
  put("pwd/rw/d1/inner.txt", "line one\n");
  put("pwd/nr/n.txt", "line one\n");
  execFileSync("mkfifo", [join(pwd, "rw", "fifo"), join(root, "outside", "fifo")]);
  link("../../outside/target.txt", "pwd/rw/out-file");
  link("../../outside", "pwd/rw/out-dir");
  link("ro", "pwd/rw/in-ro");
  link("secret", "pwd/rw/in-secret");
  link("../../outside/new.txt", "pwd/rw/dangling");
  link("loop2", "pwd/rw/loop1");
  link("loop1", "pwd/rw/loop2");
  link("/dev/null", "pwd/rw/devnull");
  link("/dev/zero", "pwd/rw/zero");
  link("..", "pwd/rw/up");
  link("../outside/fifo", "pwd/out-fifo");
  link("a.txt", "pwd/rw/s1");
  link("sub", "pwd/rw/s2");
  link("sub", "pwd/rw/s3");
  link("n.txt", "pwd/nr/s5");
  link("deep", "pwd/nr/s6");
});

afterAll(async () => {
  if (swapper !== undefined && swapper.exitCode === null && swapper.signalCode === null) {
    const exited = new Promise((resolve) => swapper!.once("exit", resolve));
    swapper.kill("SIGKILL");
    await exited;
  }
  rmSync(root, { recursive: true, force: true });
});

/** The second process: swaps links between inside and outside targets, and a real directory for a link, until killed. */
const SWAPPER = `
const fs = require("node:fs");
const [rw, nr] = process.argv.slice(1);
const links = [
  [rw + "/s1", "a.txt", "../../outside/target.txt"],
  [rw + "/s2", "sub", "../../outside"],
  [rw + "/s3", "sub", "secret"],
  [rw + "/s4", "ro", "../hidden"],
  [nr + "/s5", "n.txt", "deep/leak-5.txt"],
  [nr + "/s6", "../rw", "deep"],
];
const swap = (at, target) => { fs.symlinkSync(target, at + ".swap-tmp"); fs.renameSync(at + ".swap-tmp", at); };
const tidy = (p) => fs.rmSync(p, { recursive: true, force: true });
process.stdout.write("ready\\n");
// A short pause per round leaves the CPU to the calls on a 2-core machine; still thousands of swaps a second.
const pause = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; ; i += 1) {
  if (i % 8 === 0) Atomics.wait(pause, 0, 0, 1);
  for (const [at, a, b] of links) {
    try { swap(at, i % 2 === 0 ? b : a); } catch { tidy(at + ".swap-tmp"); }
  }
  // d1: a real directory half of the time, a link to the outside the other half.
  try {
    if (i % 2 === 0) {
      fs.symlinkSync("../../outside", rw + "/.d1-link");
      fs.renameSync(rw + "/d1", rw + "/.d1-parked");
      fs.renameSync(rw + "/.d1-link", rw + "/d1");
    } else {
      fs.unlinkSync(rw + "/d1");
      fs.renameSync(rw + "/.d1-parked", rw + "/d1");
    }
  } catch {
    tidy(rw + "/.d1-link");
    try { if (fs.lstatSync(rw + "/d1").isSymbolicLink()) fs.unlinkSync(rw + "/d1"); } catch {}
    if (fs.existsSync(rw + "/.d1-parked") && !fs.existsSync(rw + "/d1")) fs.renameSync(rw + "/.d1-parked", rw + "/d1");
  }
}
`;

function startSwapper(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", SWAPPER, join(pwd, "rw"), join(pwd, "nr")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout!.once("data", () => resolve(child));
  });
}

/** A small seeded PRNG (mulberry32): the same calls on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PREFIXES = [
  "",
  "rw/",
  "rw/sub/",
  "rw/ro/",
  "rw/secret/",
  "ro/",
  "nr/",
  "nr/deep/",
  "hidden/",
  "../outside/",
  "../outside/sub/",
  "rw/out-dir/",
  "rw/out-dir/sub/",
  "rw/in-ro/",
  "rw/in-secret/",
  "rw/up/",
  "rw/up/hidden/",
  "rw/up/rw/up/nr/deep/",
  "rw/s2/",
  "rw/s3/",
  "rw/s4/",
  "rw/d1/",
  "rw/d1/sub/",
  "nr/s5/",
  "nr/s6/",
  "nr/s6/deep/",
  "rw/sub/../../hidden/",
  "rw/loop1/",
  "./rw/../nr/deep/",
  "rw/sub/./../secret/",
  "/dev/",
];
const NAMES = [
  "a.txt",
  "b.txt",
  "c.txt",
  "r.txt",
  "n.txt",
  "inner.txt",
  "target.txt",
  "leak-1.txt",
  "leak-4.txt",
  "leak-5.txt",
  "new-1.txt",
  "new-2.txt",
  "x/y/new.txt",
  "fifo",
  "out-file",
  "out-fifo",
  "s1",
  "s5",
  "d1",
  "dangling",
  "devnull",
  "zero",
  "null",
  "loop1",
  "sub",
  "deep",
  "",
  ".",
  "..",
];
const OLD_STRINGS = ["line one", "shared", "W", CANARY, "line two\nshared"];

type Call = { tool: string; input: Record<string, unknown> };

function generate(random: () => number, i: number): Call {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let path = pick(PREFIXES) + pick(NAMES);
  if (random() < 0.1) path = `${pick(PREFIXES)}..${path === "" ? "" : `/${path}`}`;
  if (random() < 0.1) path = join(pwd, path);
  if (path === "") path = ".";
  const roll = random();
  if (roll < 0.35) return { tool: "read_file", input: { path, ...(random() < 0.2 ? { offset: 2, limit: 2 } : {}) } };
  if (roll < 0.55) return { tool: "list_dir", input: { path } };
  if (roll < 0.8) return { tool: "write_file", input: { path, content: `W${i}\nline one\n` } };
  return { tool: "edit_file", input: { path, old_string: pick(OLD_STRINGS), new_string: `E${i}` } };
}

describe("hostile file tool calls with a concurrent symlink swapper", () => {
  test("no_call_reads_or_writes_outside_the_scope", async () => {
    const scope = Scope.fromConfig(
      {
        allow: [
          { target: "rw", permission: "write" },
          { target: "ro", permission: "read" },
          { target: "nr", permission: "write", recursive: false },
        ],
        deny: [
          { target: "rw/ro", permission: "write" },
          { target: "rw/secret", permission: "read" },
        ],
      },
      pwd,
    );
    // One file link the swapper flips that the tree above does not have yet.
    link("ro", "pwd/rw/s4");
    const tools = byName(fsTools(scope));
    const before = new Map(WATCHED.map((dir) => [dir, snapshot(join(root, dir))]));

    const codes = new Map<string, number>();
    const leaks: string[] = [];
    const crashes: string[] = [];
    let ok = 0;
    let done = 0;
    swapper = await startSwapper();

    const { printed, rejections } = await guarded(async () => {
      const stream = async (seed: number, count: number): Promise<void> => {
        const random = prng(seed);
        for (let n = 0; n < count; n += 1) {
          const call = generate(random, seed * CALLS + n);
          let text: string;
          try {
            text = await tools[call.tool]!.execute(call.input);
            ok += 1;
            if (text.includes(MARKER)) leaks.push(`${JSON.stringify(call)} listed ${text}`);
          } catch (error) {
            if (!FsToolsError.is(error)) {
              crashes.push(`${JSON.stringify(call)}: ${String(error)}`);
              continue;
            }
            codes.set(error.code, (codes.get(error.code) ?? 0) + 1);
            text = error.message;
          }
          if (text.includes(CANARY)) leaks.push(`${JSON.stringify(call)} returned ${text.slice(0, 300)}`);
          done += 1;
        }
      };
      await Promise.all(Array.from({ length: STREAMS }, (_, s) => stream(s + 1, CALLS / STREAMS)));
    });

    const exited = new Promise((resolve) => swapper!.once("exit", resolve));
    swapper.kill("SIGKILL");
    await exited;

    if (process.env["FS_TOOLS_HOSTILE_DUMP"])
      writeFileSync(process.env["FS_TOOLS_HOSTILE_DUMP"], [...crashes, ...leaks].join("\n\n"));
    expect(crashes).toEqual([]);
    expect(leaks).toEqual([]);
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(done).toBe(CALLS);
    for (const dir of WATCHED) expect(changes(before.get(dir)!, snapshot(join(root, dir))), dir).toEqual([]);
    // No temp file of a write is left anywhere (each is renamed or removed).
    const leftovers = [...snapshot(root).keys()].filter((name) => /\.[0-9a-f]{12}\.tmp$/.test(name));
    expect(leftovers).toEqual([]);
    // The suite is not vacuous: calls succeeded, and the scope refused many for each reason.
    const tally = `${ok} succeeded; refused: ${JSON.stringify(Object.fromEntries([...codes].sort()))}`;
    console.log(
      `[hostile-input] @insomnia/fs-tools: ${CALLS} calls in ${STREAMS} streams beside a symlink swapper; ${tally}; 0 reads or writes outside the scope`,
    );
    if (process.env["FS_TOOLS_HOSTILE_DUMP"]) writeFileSync(`${process.env["FS_TOOLS_HOSTILE_DUMP"]}.tally`, tally);
    expect(ok, tally).toBeGreaterThan(CALLS / 20);
    expect(codes.get("OUTSIDE_SCOPE") ?? 0, tally).toBeGreaterThan(CALLS / 20);
    expect(codes.get("READ_ONLY") ?? 0, tally).toBeGreaterThan(CALLS / 200);
    expect(codes.get("NOT_A_FILE") ?? 0, tally).toBeGreaterThan(CALLS / 200);
  });
});
