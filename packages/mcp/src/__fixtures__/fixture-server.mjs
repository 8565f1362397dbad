// A real MCP server built with the SDK, for tests: its tools misbehave on purpose.
// FIXTURE_VARIANT=changed lists another set of tools (a server that changed between runs);
// FIXTURE_VARIANT=dupes lists one tool twice.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const object = (properties = {}) => ({ type: "object", properties });

/** The tools, listed deliberately out of order. */
function toolList(variant, extra) {
  const tools = [
    { name: "zeta", description: "Returns the letter zeta.", inputSchema: object() },
    { name: "echo", description: "Echoes its text.", inputSchema: object({ text: { type: "string" } }) },
    { name: "big", description: "Answers about 10 MB of text.", inputSchema: object() },
    { name: "crash", description: "Exits the server mid-call.", inputSchema: object() },
    { name: "hang", description: "Never answers.", inputSchema: object() },
    { name: "image", description: "Answers a PNG image.", inputSchema: object() },
    { name: "fail", description: "Reports a failure.", inputSchema: object() },
    { name: "grow", description: "Adds a tool and sends tools/list_changed.", inputSchema: object() },
    { name: "pid", description: "Answers the server's process id.", inputSchema: object() },
    { name: "malformed", description: "Answers a result that is not one.", inputSchema: object() },
  ];
  if (variant === "changed") {
    tools.splice(0, 2, {
      name: "echo",
      description: "Echoes its text, louder.",
      inputSchema: object({ text: { type: "string" } }),
    });
    tools.push({ name: "newcomer", description: "Came later.", inputSchema: object() });
  }
  if (variant === "dupes") tools.push({ name: "echo", description: "A second echo.", inputSchema: object() });
  return [...tools, ...extra];
}

/** A Server with the fixture tools; `onRaw(line)` writes a raw line to the wire (stdio only). */
export function fixtureServer({ variant = process.env.FIXTURE_VARIANT, onRaw } = {}) {
  const extra = [];
  const server = new Server({ name: "fixture", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList(variant, extra) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extraInfo) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "zeta":
        return { content: [{ type: "text", text: "ζ" }] };
      case "echo":
        return { content: [{ type: "text", text: `${variant === "changed" ? "ECHO" : "echo"}: ${args.text ?? ""}` }] };
      case "big":
        return { content: [{ type: "text", text: "0123456789".repeat(1_000_000) }] };
      case "crash":
        process.exit(3);
        break;
      case "hang":
        return new Promise(() => {});
      case "image":
        return {
          content: [
            { type: "text", text: "a pixel:" },
            { type: "image", mimeType: "image/png", data: Buffer.from("not really a png").toString("base64") },
            { type: "image", mimeType: "image/bmp", data: Buffer.from("a bitmap").toString("base64") },
          ],
        };
      case "fail":
        return { isError: true, content: [{ type: "text", text: "the fixture failed on purpose" }] };
      case "grow":
        extra.push({ name: `grown${extra.length}`, description: "Added at run time.", inputSchema: object() });
        await server.sendToolListChanged();
        return { content: [{ type: "text", text: "grew" }] };
      case "pid":
        return { content: [{ type: "text", text: String(process.pid) }] };
      case "malformed":
        if (onRaw !== undefined) {
          onRaw(`${JSON.stringify({ jsonrpc: "2.0", id: extraInfo.requestId, result: { content: "not a list" } })}\n`);
          return new Promise(() => {});
        }
        return { content: "not a list" };
      default:
        throw new Error(`unknown tool ${request.params.name}`);
    }
  });
  return server;
}
