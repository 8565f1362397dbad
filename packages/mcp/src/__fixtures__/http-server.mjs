// The fixture MCP server over streamable HTTP (stateless: one server per request). Prints
// its URL on stdout; with REQUIRE_TOKEN set, refuses requests without that bearer token.
import { createServer } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { fixtureServer } from "./fixture-server.mjs";

const http = createServer(async (req, res) => {
  const token = process.env.REQUIRE_TOKEN;
  if (token && req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401).end("unauthorized");
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  const server = fixtureServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
http.listen(0, "127.0.0.1", () => {
  process.stdout.write(`http://127.0.0.1:${http.address().port}/mcp\n`);
});
