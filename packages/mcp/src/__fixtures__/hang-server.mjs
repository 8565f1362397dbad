// A "server" that never answers initialize, and keeps a child of its own alive.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

// `sleep` rather than a second Node process: the child only has to stay alive, as the stdio fixture's does.
const child = spawn("sleep", ["3600"], { stdio: "ignore" });
if (process.env.PID_FILE) writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}\n`, { flag: "a" });
process.stdin.resume();
setInterval(() => {}, 1000);
