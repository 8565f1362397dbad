// Benchmark 12: tools from MCP servers. A tool call through @insomnia/mcp against the SDK's own
// `client.callTool` to the same stdio server; and `pod run` from process start to the first
// request byte with one server that never answers initialize, against the same pod without it.
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { compare, distFile, fmtMs, fmtRatio, importDist, main, median, met, result, ROOT, tempDir } from "./lib.mjs";
import { anthropicStream } from "./anthropic-stream.mjs";

const { McpServers } = await importDist("mcp");
const MCP_DIR = join(ROOT, "packages", "mcp");
const fromMcp = createRequire(join(MCP_DIR, "package.json"));
/** The SDK's ES module build of `subpath` (resolved from @insomnia/mcp, which depends on it). */
const sdk = (subpath) =>
  import(
    pathToFileURL(fromMcp.resolve(`@modelcontextprotocol/sdk/${subpath}`).replace("/dist/cjs/", "/dist/esm/")).href
  );
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const SERVER = join(MCP_DIR, "src", "__fixtures__", "stdio-server.mjs");
const HANG = join(MCP_DIR, "src", "__fixtures__", "hang-server.mjs");
const STARTUP_TIMEOUT_MS = 1000;

async function callOverhead(log) {
  const ours = new McpServers(
    [{ name: "fx", transport: { type: "stdio", command: process.execPath, args: [SERVER] } }],
    { cwd: MCP_DIR },
  );
  const echo = (await ours.start()).find((tool) => tool.name === "mcp__fx__echo");
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: "ignore" }));
  try {
    const input = { text: "a short line of text, as most tool calls send" };
    const check = await echo.execute(input);
    const direct = await client.callTool({ name: "echo", arguments: input });
    if (check !== direct.content[0].text) throw new Error("the two calls answered differently");
    log("a tool call: McpServers' tool.execute vs Client.callTool, each to its own server process");
    return await compare(
      { ours: () => echo.execute(input), sdk: () => client.callTool({ name: "echo", arguments: input }) },
      { time: 1500, rounds: 3 },
    );
  } finally {
    await client.close();
    await ours.close();
  }
}

// `pod run` streams (the AI SDK's streamText): the answer is Anthropic's server-sent events.
const ANSWER = anthropicStream("hello");

async function firstRequest(log, dir) {
  let onFirstByte;
  const provider = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(ANSWER);
    });
  });
  provider.on("connection", (socket) => socket.once("data", () => onFirstByte?.(performance.now())));
  await new Promise((resolve) => provider.listen(0, "127.0.0.1", resolve));
  const baseURL = `http://127.0.0.1:${provider.address().port}/v1`;
  const server = (name, file, extra = []) => [
    `  ${name}:`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(file)}]`,
    ...extra.map((line) => `    ${line}`),
  ];
  const workspaces = { none: [], hanging: server("stuck", HANG, [`startup_timeout_ms: ${STARTUP_TIMEOUT_MS}`]) };
  for (const [name, servers] of Object.entries(workspaces)) {
    await mkdir(join(dir, name, ".insomnia"), { recursive: true });
    await writeFile(
      join(dir, name, ".insomnia", "pod.yaml"),
      `provider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: ${baseURL}\n`,
    );
    // A checkout may not start programs until trusted: the servers are in the user's own layer.
    await mkdir(join(dir, `config-${name}`, "insomnia"), { recursive: true });
    await writeFile(
      join(dir, `config-${name}`, "insomnia", "pod.yaml"),
      servers.length === 0 ? "" : ["mcp_servers:", ...servers, ""].join("\n"),
    );
  }
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_STATE_HOME: join(dir, "state"),
    ANTHROPIC_API_KEY: "bench",
    NO_COLOR: "1",
  };
  const bin = distFile("cli", "bin.cjs");
  const time = (name) =>
    new Promise((resolve, reject) => {
      const cwd = join(dir, name);
      const t0 = performance.now();
      let firstByte;
      onFirstByte = (t) => (firstByte ??= t - t0);
      const child = spawn(process.execPath, ["--no-warnings", bin, "run", "--new", "hello"], {
        cwd,
        env: { ...env, XDG_CONFIG_HOME: join(dir, `config-${name}`) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      child.stdout.resume();
      child.on("close", (code) => {
        if (code !== 0 || firstByte === undefined)
          reject(new Error(`pod run exited with ${code}: ${stderr.slice(0, 400)}`));
        else resolve(firstByte);
      });
    });
  try {
    const samples = { none: [], hanging: [] };
    const SAMPLES = 6;
    log(
      `${SAMPLES} × pod run --new hello without MCP servers, and with one that never answers (${STARTUP_TIMEOUT_MS} ms)…`,
    );
    await time("none");
    for (let i = 0; i < SAMPLES; i++) {
      const order = i % 2 === 0 ? ["none", "hanging"] : ["hanging", "none"];
      for (const name of order) samples[name].push(await time(name));
    }
    return { none: median(samples.none), hanging: median(samples.hanging) };
  } finally {
    provider.close();
  }
}

export default async function run(log) {
  const { dir, cleanup } = await tempDir("mcp");
  try {
    const call = await callOverhead(log);
    const first = await firstRequest(log, dir);
    const callRatio = call.ours.ms / call.sdk.ms;
    const extra = first.hanging - first.none;
    return result(12, "Tools from MCP servers", {
      rows: [
        {
          figure: "one tool call (`echo`, a short text) to a stdio server",
          ours: fmtMs(call.ours.ms),
          reference: `the SDK's \`client.callTool\`: ${fmtMs(call.sdk.ms)}`,
          ratio: fmtRatio(callRatio),
          goal: "≤ 1.2x",
          met: met(callRatio <= 1.2),
        },
        {
          figure: `\`pod run --new hello\` to the first request byte, with a server that never answers initialize (startup_timeout_ms ${STARTUP_TIMEOUT_MS})`,
          ours: fmtMs(first.hanging),
          reference: `without MCP servers: ${fmtMs(first.none)}`,
          ratio: `+${fmtMs(extra)}`,
          goal: `≤ +${STARTUP_TIMEOUT_MS + 100} ms`,
          met: met(extra <= STARTUP_TIMEOUT_MS + 100),
        },
      ],
      notes: [
        "Both sides of the call row talk to their own process of the same fixture server (packages/mcp/src/__fixtures__/stdio-server.mjs), started once; the median of one call is shown.",
        "The first-request row: the same pod without `mcp_servers`, and with one server that reads stdin and never answers initialize. The extra time is the startup timeout, loading @insomnia/mcp (dist/vendor/mcp.cjs, only when servers are declared) and spawning the server; stopping it is not awaited before the request.",
      ],
    });
  } finally {
    await cleanup();
  }
}

await main(run);
