// Times the README's test command (`.ci/run`) in a fresh clone of each of two commits,
// alternating them so that a change in the machine's speed reaches both, and prints every run,
// the medians and their ratio. A run takes minutes, so `pnpm bench` does not run this.
//
//   node bench/test-command.mjs <reference-commit> <commit> [rounds]   (2 rounds by default)
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

const [reference, candidate, rounds = "2"] = process.argv.slice(2);
if (reference === undefined || candidate === undefined || !/^[1-9]\d*$/.test(rounds)) {
  console.error("usage: node bench/test-command.mjs <reference-commit> <commit> [rounds]");
  process.exit(2);
}

for (const commit of [reference, candidate]) {
  try {
    execFileSync("git", ["rev-parse", "--verify", "--quiet", `${commit}^{commit}`], { cwd: ROOT, stdio: "ignore" });
  } catch {
    console.error(`${commit} is not a commit of this repository`);
    process.exit(2);
  }
}

/** CPU seconds of this process's waited-for children (Linux; NaN elsewhere). */
function childCpuSeconds() {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** `.ci/run` in a fresh clone of `commit`: wall and CPU seconds. The clone is removed; its log is kept if it failed. */
async function timeRun(commit) {
  const dir = mkdtempSync(join(tmpdir(), "insomnia-test-command-"));
  execFileSync("git", ["clone", "-q", ROOT, dir]);
  execFileSync("git", ["checkout", "-q", commit], { cwd: dir });
  const log = `${dir}.log`;
  const output = openSync(log, "w");
  const cpuBefore = childCpuSeconds();
  const start = performance.now();
  const code = await new Promise((resolve) => {
    spawn("bash", [".ci/run"], { cwd: dir, stdio: ["ignore", output, output] }).on("exit", resolve);
  });
  const wall = (performance.now() - start) / 1000;
  const cpu = childCpuSeconds() - cpuBefore;
  rmSync(dir, { recursive: true, force: true });
  if (code === 0) rmSync(log);
  return { wall, cpu, code, log };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const minutes = (seconds) => `${Math.floor(seconds / 60)} m ${Math.round(seconds % 60)} s`;

const runs = { [reference]: [], [candidate]: [] };
for (let round = 1; round <= Number(rounds); round++) {
  for (const commit of [reference, candidate]) {
    const run = await timeRun(commit);
    runs[commit].push(run);
    const outcome = run.code === 0 ? "passed" : `FAILED (exit ${run.code}), log ${run.log}`;
    console.log(`${commit}  ${minutes(run.wall)}  ${Math.round(run.cpu)} CPU-s  ${outcome}`);
  }
}
const wall = (commit) => median(runs[commit].map((run) => run.wall));
const cpu = (commit) => median(runs[commit].map((run) => run.cpu));
console.log(
  `median: ${reference} ${minutes(wall(reference))}, ${candidate} ${minutes(wall(candidate))}; ` +
    `${candidate}/${reference}: wall ${(wall(candidate) / wall(reference)).toFixed(2)}x, ` +
    `CPU ${(cpu(candidate) / cpu(reference)).toFixed(2)}x`,
);
