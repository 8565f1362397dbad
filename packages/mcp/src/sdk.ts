// The MCP SDK is loaded on the first server start, not when this package is imported: its
// schemas take a few hundred milliseconds to build on a cold start, and that time belongs
// inside the servers' startup timeout (a pod without servers never pays it).

/** The parts of the SDK (and of our SDK-based stdio transport) a server uses. */
export interface Sdk {
  readonly Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
  readonly StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
  readonly ErrorCode: typeof import("@modelcontextprotocol/sdk/types.js").ErrorCode;
  readonly McpError: typeof import("@modelcontextprotocol/sdk/types.js").McpError;
  readonly ProcessGroupStdioTransport: typeof import("./stdio-transport.ts").ProcessGroupStdioTransport;
}

let loading: Promise<Sdk> | undefined;

/** Loads the SDK once; every later call gets the same modules. */
export function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("./stdio-transport.ts"),
  ]).then(([client, http, types, stdio]) => ({
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ProcessGroupStdioTransport: stdio.ProcessGroupStdioTransport,
  }));
  return loading;
}
