// Benchmark 8: run_command of @insomnia/sandbox. `run_command "true"` (mount plan from the
// scope, bwrap with new namespaces, bash -c true, the whole PID namespace gone) against
// spawning `bash -c true` directly; and a command writing 100 MB, capped, with the memory
// this process grows by while it streams through.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { compare, fmtBytes, fmtMs, fmtRatio, importDist, main, met, result, tempDir } from "./lib.mjs";

const { detectSandbox, runCommandTool, Sandbox } = await importDist("sandbox");
const { Scope } = await importDist("scope");
const run = promisify(execFile);

export default async function bench(log) {
  const found = await detectSandbox();
  if (!found.available) {
    return result(8, "Commands in the sandbox", {
      rows: [],
      notes: [`Not measured: ${found.error.message}`],
    });
  }
  const { dir, cleanup } = await tempDir("sandbox");
  try {
    writeFileSync(join(dir, "file.txt"), "x\n");
    const scope = Scope.fromConfig({ allow: [{ target: ".", permission: "write" }] }, dir);
    const tool = runCommandTool(new Sandbox(scope, { bwrapPath: found.bwrapPath }));
    const check = await tool.execute({ command: "true" });
    if (!check.startsWith("exit code: 0\n")) throw new Error(`run_command "true" failed: ${check}`);
    log('run_command "true" vs bash -c true');
    const timing = await compare(
      {
        ours: () => tool.execute({ command: "true" }),
        reference: () => run("bash", ["-c", "true"], { cwd: dir }),
      },
      { time: 2000, rounds: 3 },
    );
    const ratio = timing.ours.ms / timing.reference.ms;
    const rows = [
      {
        figure: '`run_command "true"` (sandbox set up and torn down)',
        ours: fmtMs(timing.ours.ms),
        reference: `\`execFile("bash", ["-c", "true"])\`: ${fmtMs(timing.reference.ms)}`,
        ratio: fmtRatio(ratio),
        goal: "≤ 5x",
        met: met(ratio <= 5),
      },
    ];

    /** Runs a command writing `bytes` bytes; the result's size and how much this process's RSS grew meanwhile. */
    const stream = async (bytes) => {
      log(`${fmtBytes(bytes)} of output`);
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 2);
      const started = performance.now();
      const output = await tool.execute({ command: `head -c ${bytes} /dev/zero | tr '\\0' a` });
      const elapsed = performance.now() - started;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      if (!output.includes(`(${bytes} bytes in all)`)) throw new Error("the output was not capped visibly");
      return { kept: Buffer.byteLength(output), grew: peak - before, elapsed };
    };
    const small = await stream(10 * 1024 * 1024);
    const bytes = 100 * 1024 * 1024;
    const large = await stream(bytes);
    rows.push({
      figure: "100 MB of stdout: kept for the model",
      ours: fmtBytes(large.kept),
      reference: `written by the command: ${fmtBytes(bytes)}`,
      ratio: fmtRatio(large.kept / bytes),
      goal: "capped (≤ 64 KiB + notes)",
      met: met(large.kept < 70 * 1024),
    });
    rows.push({
      figure: "100 MB of stdout: peak growth of this process's RSS while it streamed",
      ours: fmtBytes(large.grew),
      reference: `the output: ${fmtBytes(bytes)}`,
      ratio: fmtRatio(large.grew / bytes),
      goal: "flat (≤ 0.5x; keeping it would be ≥ 1x)",
      met: met(large.grew <= bytes / 2),
    });
    rows.push({
      figure: "(context) the same for 10 MB: the growth does not follow the output",
      ours: fmtBytes(small.grew),
      reference: `the output: ${fmtBytes(10 * 1024 * 1024)}`,
      ratio: fmtRatio(small.grew / (10 * 1024 * 1024)),
      goal: "—",
      met: "—",
    });
    rows.push({
      figure: "(context) 100 MB of stdout: time until the result",
      ours: fmtMs(large.elapsed),
      reference: "—",
      ratio: "—",
      goal: "—",
      met: "—",
    });
    return result(8, "Commands in the sandbox", {
      rows,
      notes: [
        "Each `run_command` plans the mounts again from the scope and the disk (a few `lstat`/`readdir`), starts bwrap with new user, PID, IPC, UTS, cgroup and network namespaces, mounts /proc, /dev, a tmpfs /tmp and the scope, runs `bash -c`, and returns after the whole PID namespace is gone.",
        "The reference is the same shell without any sandbox; most of the difference is bwrap creating namespaces and mounts (the kernel's work), not this package.",
        "The memory row samples RSS every 2 ms: pipe chunks are dropped as they arrive, only the first and last 16 KiB of each stream are kept.",
      ],
    });
  } finally {
    await cleanup();
  }
}

await main(bench);
