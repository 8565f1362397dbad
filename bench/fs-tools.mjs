// Benchmark 7: the file tools of @insomnia/fs-tools against the plain fs calls they wrap —
// read_file of a 4 KiB and a 1 MiB text file vs fs.readFile of the same file, and
// write_file vs writeFile + fsync + rename. The tools add the scope checks (one realpath,
// a directory descriptor read back through /proc, O_NOFOLLOW opens, fstat), line numbering
// for reads and a directory fsync for writes: a few syscalls, which is what the goal bounds.
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { compare, fmtBytes, fmtMs, fmtRatio, importDist, main, met, result, tempDir } from "./lib.mjs";

const { fsTools } = await importDist("fs-tools");
const { Scope } = await importDist("scope");

/** Text of `bytes` bytes in lines of 64 (a typical source file). */
function text(bytes) {
  const line = `${"const value = compute(input, options); // a line of code".padEnd(63, " ")}\n`;
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

/** write_file of 4 KiB in `dir` against writeFile + fsync + rename (and + a directory fsync). */
async function writeTimes(tools, dir, log) {
  const content = text(4 * 1024);
  const target = join(dir, "written.txt");
  let n = 0;
  log(`write_file of 4 KiB in ${dir}`);
  const reference = async (durable) => {
    const temp = join(dir, `.ref-${n++}.tmp`);
    await writeFile(temp, content);
    const handle = await open(temp, "r+");
    await handle.sync();
    await handle.close();
    await rename(temp, join(dir, "reference.txt"));
    if (durable) {
      const d = openSync(dir, "r");
      fsyncSync(d);
      closeSync(d);
    }
  };
  return compare(
    {
      ours: () => tools.write_file.execute({ path: target, content }),
      reference: () => reference(false),
      referenceDurable: () => reference(true),
    },
    { time: 1500, rounds: 3 },
  );
}

export default async function run(log) {
  const { dir, cleanup } = await tempDir("fs-tools");
  try {
    const scope = Scope.fromConfig({ allow: [{ target: ".", permission: "write" }] }, dir);
    // Limits raised so read_file returns the whole file, as fs.readFile does.
    const tools = Object.fromEntries(
      fsTools(scope, { maxOutputBytes: 64 * 1024 * 1024, defaultLineLimit: 2 ** 31 }).map((t) => [t.name, t]),
    );
    const rows = [];
    for (const size of [4 * 1024, 1024 * 1024]) {
      const file = join(dir, `read-${size}.txt`);
      writeFileSync(file, text(size));
      const check = await tools.read_file.execute({ path: file });
      if (check !== readFileSync(file, "utf8")) throw new Error("read_file returned something else than the file");
      log(`read_file of ${fmtBytes(size)}`);
      const timing = await compare(
        {
          ours: () => tools.read_file.execute({ path: file }),
          readFile: () => readFile(file, "utf8"),
          readFileSync: () => readFileSync(file, "utf8"),
        },
        { time: 700, rounds: 3, batch: size < 65536 ? 20 : 1 },
      );
      const ratio = timing.ours.ms / timing.readFile.ms;
      rows.push({
        figure: `\`read_file\` of a ${fmtBytes(size)} text file (whole file)`,
        ours: fmtMs(timing.ours.ms),
        reference: `\`fs.promises.readFile(file, "utf8")\`: ${fmtMs(timing.readFile.ms)}`,
        ratio: fmtRatio(ratio),
        goal: "≤ 1.5x",
        met: met(ratio <= 1.5),
      });
      rows.push({
        figure: `(context) the same against \`readFileSync\``,
        ours: fmtMs(timing.ours.ms),
        reference: `\`readFileSync(file, "utf8")\`: ${fmtMs(timing.readFileSync.ms)}`,
        ratio: fmtRatio(timing.ours.ms / timing.readFileSync.ms),
        goal: "—",
        met: "—",
      });
    }

    const onDisk = await writeTimes(tools, dir, log);
    const ratio = onDisk.ours.ms / onDisk.reference.ms;
    rows.push({
      figure: "`write_file` of 4 KiB (temp file, fsync, rename, directory fsync)",
      ours: fmtMs(onDisk.ours.ms),
      reference: `\`writeFile\` temp + \`fsync\` + \`rename\`: ${fmtMs(onDisk.reference.ms)}`,
      ratio: fmtRatio(ratio),
      goal: "≤ 1.5x",
      met: met(ratio <= 1.5),
    });
    rows.push({
      figure: "(context) the same against a reference that also fsyncs the directory",
      ours: fmtMs(onDisk.ours.ms),
      reference: `+ directory \`fsync\`: ${fmtMs(onDisk.referenceDurable.ms)}`,
      ratio: fmtRatio(onDisk.ours.ms / onDisk.referenceDurable.ms),
      goal: "—",
      met: "—",
    });
    if (existsSync("/dev/shm")) {
      const shm = mkdtempSync("/dev/shm/insomnia-bench-fs-tools-");
      try {
        const shmTools = Object.fromEntries(
          fsTools(Scope.fromConfig({ allow: [{ target: ".", permission: "write" }] }, shm)).map((t) => [t.name, t]),
        );
        const inMemory = await writeTimes(shmTools, shm, log);
        rows.push({
          figure: "(context) `write_file` on tmpfs (`/dev/shm`), where fsync is almost free: the checks' own cost",
          ours: fmtMs(inMemory.ours.ms),
          reference: `\`writeFile\` temp + \`fsync\` + \`rename\`: ${fmtMs(inMemory.reference.ms)}`,
          ratio: fmtRatio(inMemory.ours.ms / inMemory.reference.ms),
          goal: "—",
          met: "—",
        });
      } finally {
        rmSync(shm, { recursive: true, force: true });
      }
    }
    return result(7, "File tools", {
      rows,
      notes: [
        "Files live in the OS temp directory; fsync costs whatever that file system charges, on both sides alike.",
        "The limits are raised so `read_file` returns the whole file, as `readFile` does (it checks that it did); with a line limit above the byte count no line is counted (a file cannot have more lines than bytes). With the default limit of 2000 lines a call reads the same file and scans at most 2000 newlines.",
        "`write_file` also fsyncs the directory after the rename (without it a crash can lose the rename); the reference required by the goal does not, the context row shows one that does.",
        "On a disk, fsync dominates both sides and varies with what else the machine writes (other processes share the disk and the journal); the tmpfs row shows what the checks themselves cost.",
      ],
    });
  } finally {
    await cleanup();
  }
}

await main(run);
