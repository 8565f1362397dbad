// A "server" that never answers initialize, and keeps a child of its own alive.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
if (process.env.PID_FILE) writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}\n`, { flag: "a" });
process.stdin.resume();
setInterval(() => {}, 1000);
