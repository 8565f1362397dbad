// The fixture MCP server on stdio. With PID_FILE set it also starts a grandchild process
// (to prove the whole process tree is stopped) and writes both pids there. With TERM_FILE set
// it writes "SIGTERM" there when asked to stop with that signal (a graceful stop), then exits.
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { fixtureServer } from "./fixture-server.mjs";

if (process.env.PID_FILE) {
  const child = spawn("sleep", ["3600"], { stdio: "ignore" });
  writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}\n`, { flag: "a" });
}
if (process.env.TERM_FILE) {
  const termFile = process.env.TERM_FILE;
  process.on("SIGTERM", () => {
    appendFileSync(termFile, "SIGTERM\n");
    process.exit(0);
  });
}
const server = fixtureServer({ onRaw: (line) => process.stdout.write(line) });
await server.connect(new StdioServerTransport());
