// The fixture MCP server on stdio. With PID_FILE set it also starts a grandchild process
// (to prove the whole process tree is stopped) and writes both pids there. With TERM_FILE set
// it is a server that outlives the end of its input and stops only when signalled: it writes
// "SIGTERM" there when asked to stop with that signal (a graceful stop), "error <message>" for
// an uncaught exception and "exit <code>" for any exit not caused by SIGTERM, so a test that
// expected SIGTERM says what happened instead (a kill by another signal records nothing).
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { fixtureServer } from "./fixture-server.mjs";

const termFile = process.env.TERM_FILE;

if (process.env.PID_FILE) {
  const child = spawn("sleep", ["3600"], { stdio: "ignore" });
  writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}\n`, { flag: "a" });
}
if (termFile) {
  const record = (line) => appendFileSync(termFile, `${line}\n`);
  // Alive until a signal ends it, whatever its grandchild does.
  setInterval(() => undefined, 60_000);
  let signalled = false;
  process.on("SIGTERM", () => {
    signalled = true;
    record("SIGTERM");
    process.exit(0);
  });
  process.on("exit", (code) => {
    if (!signalled) record(`exit ${code}`);
  });
  process.on("uncaughtException", (error) => {
    record(`error ${error.message}`);
    console.error(error); // on stderr as before: pod quotes a failed server's stderr
    process.exit(1);
  });
}
const server = fixtureServer({ onRaw: (line) => process.stdout.write(line) });
await server.connect(new StdioServerTransport());
