// The fixture MCP server on stdio. With PID_FILE set it also starts a grandchild process
// (to prove the whole process tree is stopped) and writes both pids there.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { fixtureServer } from "./fixture-server.mjs";

if (process.env.PID_FILE) {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}\n`, { flag: "a" });
}
const server = fixtureServer({ onRaw: (line) => process.stdout.write(line) });
await server.connect(new StdioServerTransport());
