import { resolve } from "node:path";
import type { PodManifest } from "@insomnia/manifest";
import type { McpServerConfig, McpServers, McpServerStatus, McpWarning } from "@insomnia/mcp";
import type { SegmentStartRecord } from "@insomnia/pod";
import type { Worker } from "@insomnia/worker";

// Everything the CLI does with MCP servers is in this file, so it can move into the pod
// (which is to own tool factories) without touching the commands.

/** The manifest's `mcp_servers` as @insomnia/mcp configs, sorted by name; relative `cwd`s are the pod's. */
export function mcpServerConfigs(manifest: PodManifest): McpServerConfig[] {
  return Object.entries(manifest.mcp_servers ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, server]) => ({
      name,
      transport:
        server.url === undefined
          ? {
              type: "stdio" as const,
              command: server.command!,
              args: server.args ?? [],
              env: { ...server.env },
              cwd: resolve(manifest.pod.pwd, server.cwd ?? "."),
            }
          : { type: "http" as const, url: server.url, headersFromEnv: { ...server.headers_from_env } },
      startupTimeoutMs: server.startup_timeout_ms,
      toolTimeoutMs: server.tool_timeout_ms,
      ...(server.enabled_tools === undefined ? {} : { enabledTools: server.enabled_tools }),
      ...(server.disabled_tools === undefined ? {} : { disabledTools: server.disabled_tools }),
    }));
}

/** What the commands need to start a manifest's servers. */
export interface McpToolsOptions {
  manifest: PodManifest;
  env: Readonly<Record<string, string | undefined>>;
  onWarning: (warning: McpWarning) => void;
  /** Stops every running call (Ctrl-C), for workers that pass tools no signal of their own. */
  signal?: AbortSignal | undefined;
}

/** The servers of one `pod run`: started by the worker's factory flush, stopped by `close()`. */
export interface RunMcpTools {
  /** Restore: offer exactly the MCP tools the segment recorded (`RestoreDeps.onSegmentStart`). */
  freezeFrom(start: SegmentStartRecord): void;
  close(): Promise<void>;
}

/**
 * Registers the manifest's MCP servers as one tool factory of the worker: they start, in
 * parallel and bounded by their startup timeouts, when the pod materializes (or restores).
 */
export function registerMcpTools(worker: Worker, options: McpToolsOptions): RunMcpTools {
  const configs = mcpServerConfigs(options.manifest);
  let frozen: SegmentStartRecord["toolDefinitions"];
  let servers: McpServers | undefined;
  let closed = false;
  worker.tools.registerFactory(async () => {
    // A restored conversation keeps the MCP tools it recorded even when no server is configured now.
    const recorded = frozen?.some((definition) => definition.name.startsWith("mcp__")) === true;
    if (closed || (configs.length === 0 && !recorded)) return [];
    const { McpServers } = await import("@insomnia/mcp");
    servers = new McpServers(configs, { ...serversOptions(options), ...(frozen === undefined ? {} : { frozen }) });
    return servers.start();
  });
  return {
    freezeFrom(start) {
      frozen = start.toolDefinitions;
    },
    async close() {
      closed = true;
      await servers?.close();
    },
  };
}

function serversOptions(options: McpToolsOptions) {
  return {
    cwd: options.manifest.pod.pwd,
    env: options.env,
    onWarning: options.onWarning,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}

/** What `pod prompt` and `pod check` learn by starting the servers once. */
export interface ProbedMcpServers {
  /** Names of the tools they offer, sorted. */
  tools: string[];
  servers: McpServerStatus[];
  warnings: McpWarning[];
}

/**
 * Starts the manifest's servers (bounded by their startup timeouts) to learn their tools, as a
 * pod would, then stops them.
 */
export async function probeMcpServers(
  manifest: PodManifest,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ProbedMcpServers> {
  const configs = mcpServerConfigs(manifest);
  if (configs.length === 0) return { tools: [], servers: [], warnings: [] };
  const { McpServers } = await import("@insomnia/mcp");
  const servers = new McpServers(configs, { cwd: manifest.pod.pwd, env });
  try {
    const tools = await servers.start();
    return { tools: tools.map((tool) => tool.name), servers: servers.status(), warnings: [...servers.warnings] };
  } finally {
    await servers.close();
  }
}
