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
const minutes = (seconds) => `${Math.floor(Math.round(seconds) / 60)} m ${Math.round(seconds) % 60} s`;

// Keyed by position, so that one commit against itself measures the machine's noise.
const commits = [reference, candidate];
const runs = [[], []];
for (let round = 1; round <= Number(rounds); round++) {
  for (const [side, commit] of commits.entries()) {
    const run = await timeRun(commit);
    runs[side].push(run);
    const outcome = run.code === 0 ? "passed" : `FAILED (exit ${run.code}), log ${run.log}`;
    console.log(`${commit}  ${minutes(run.wall)}  ${Math.round(run.cpu)} CPU-s  ${outcome}`);
  }
}
// A failed run's time says nothing about the commit's speed: the medians are of passed runs only.
const passed = (side) => runs[side].filter((run) => run.code === 0);
const unmeasured = commits.filter((_, side) => passed(side).length === 0);
if (unmeasured.length > 0) {
  console.log(`no passed run of ${unmeasured.join(" and ")}: no medians to compare`);
  process.exit(1);
}
const wall = (side) => median(passed(side).map((run) => run.wall));
const cpu = (side) => median(passed(side).map((run) => run.cpu));
const summary = (side) =>
  `${commits[side]} ${minutes(wall(side))} (${passed(side).length} of ${runs[side].length} passed)`;
console.log(
  `median of passed runs: ${summary(0)}, ${summary(1)}; ${candidate}/${reference}: ` +
    `wall ${(wall(1) / wall(0)).toFixed(2)}x, CPU ${(cpu(1) / cpu(0)).toFixed(2)}x`,
);
