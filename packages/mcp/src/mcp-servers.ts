import type { Tool, ToolDefinition, ToolFactory, ToolOutput } from "@insomnia/worker";
import { McpError } from "./mcp-error.ts";
import { McpServer } from "./mcp-server.ts";
import type { McpServerState } from "./mcp-server.ts";
import type { McpWarning } from "./mcp-warning.ts";
import { MAX_RESULT_BYTES } from "./result-text.ts";
import type { McpServerConfig } from "./server-config.ts";
import { mcpToolName, mcpToolPrefix, toolNameProblem } from "./tool-name.ts";

/** Options of {@link McpServers}. */
export interface McpServersOptions {
  /** Working directory of stdio servers that set no `cwd` (the pod's directory). */
  cwd: string;
  /** Where `headers_from_env` values are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * The tool definitions a restored segment recorded. When given, exactly the `mcp__` ones
   * among them are offered, byte for byte, whatever the servers list now (a server whose
   * list changed is a TOOLS_CHANGED warning; calls to a tool it no longer has fail).
   */
  frozen?: readonly ToolDefinition[] | undefined;
  /** Called with each warning as it happens (it is also kept in `warnings`). */
  onWarning?: ((warning: McpWarning) => void) | undefined;
  /** Largest text result in UTF-8 bytes (default 256 KiB, as read_file). */
  maxResultBytes?: number | undefined;
  /**
   * Stops every running call when it fires, for workers that pass no signal of their own to
   * `execute(input, { signal })` (a call's own signal is honoured as well).
   */
  signal?: AbortSignal | undefined;
  /** What this client calls itself at initialize (default `insomnia`). */
  clientInfo?: { name: string; version: string } | undefined;
}

/** One server as `pod check` and `pod prompt --explain` show it. */
export interface McpServerStatus {
  readonly name: string;
  /** `stdio` or `http`. */
  readonly transport: "stdio" | "http";
  readonly state: McpServerState;
  /** Full names of the tools offered from this server, sorted. */
  readonly tools: readonly string[];
  /** Why it is not running, when it is not. */
  readonly error?: string;
}

/** The server tool behind one full name. */
interface Route {
  readonly server: McpServer;
  readonly tool: string;
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sameDefinitions(a: readonly ToolDefinition[], b: readonly ToolDefinition[]): boolean {
  return a.length === b.length && a.every((definition, i) => JSON.stringify(definition) === JSON.stringify(b[i]));
}

/**
 * The MCP servers of one pod and the tools they offer. `start()` starts every server in
 * parallel, each bounded by its startup timeout; the tool list it yields is then frozen for
 * the object's life (`tools/list_changed` never changes it). `close()` stops every server.
 */
export class McpServers {
  readonly #servers: readonly McpServer[];
  readonly #frozen: readonly ToolDefinition[] | undefined;
  readonly #onWarning: ((warning: McpWarning) => void) | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #warnings: McpWarning[] = [];
  #started: Promise<readonly Tool[]> | undefined;
  #tools: readonly Tool[] | undefined;

  constructor(configs: readonly McpServerConfig[], options: McpServersOptions) {
    const names = new Set<string>();
    for (const config of configs) {
      if (names.has(config.name)) {
        throw new McpError("INVALID_ARGUMENT", `two MCP servers are named "${config.name}"; give each its own name`);
      }
      names.add(config.name);
    }
    const context = {
      cwd: options.cwd,
      env: options.env ?? process.env,
      clientInfo: options.clientInfo ?? { name: "insomnia", version: "0" },
      maxResultBytes: options.maxResultBytes ?? MAX_RESULT_BYTES,
    };
    this.#servers = configs.map((config) => new McpServer(config, context));
    this.#frozen = options.frozen?.filter((definition) => definition.name.startsWith("mcp__"));
    this.#onWarning = options.onWarning;
    this.#signal = options.signal;
  }

  /** Warnings so far: servers that did not start, tools left out, changed lists on restore. */
  get warnings(): readonly McpWarning[] {
    return this.#warnings;
  }

  /**
   * Starts every server at once and resolves, after each answered or hit its startup
   * timeout, with the tools to offer, sorted by name. Runs once; later calls share it.
   */
  start(): Promise<readonly Tool[]> {
    this.#started ??= this.#startAll();
    return this.#started;
  }

  /** A worker tool factory: starts the servers when the worker flushes its pending factories. */
  toolFactory(): ToolFactory {
    return () => this.start();
  }

  /** Each server, its state and the tools offered from it. */
  status(): McpServerStatus[] {
    const offered = (this.#tools ?? []).map((tool) => tool.name);
    return this.#servers.map((server) => ({
      name: server.name,
      transport: server.config.transport.type,
      state: server.state,
      tools: offered.filter((name) => name.startsWith(mcpToolPrefix(server.name))),
      ...(server.lastError === undefined ? {} : { error: server.lastError }),
    }));
  }

  /** Stops every server (stdio servers with their whole process tree) and waits for them. */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((server) => server.close()));
  }

  async #startAll(): Promise<readonly Tool[]> {
    const outcomes = await Promise.allSettled(this.#servers.map((server) => server.start()));
    const routes = new Map<string, Route>();
    const live: ToolDefinition[] = [];
    for (const [i, outcome] of outcomes.entries()) {
      const server = this.#servers[i]!;
      if (outcome.status === "rejected") {
        this.#warn({
          code: "MCP_SERVER_UNAVAILABLE",
          server: server.name,
          message: `MCP server "${server.name}" did not start: ${server.lastError ?? String(outcome.reason)}; the pod runs without its tools`,
        });
        continue;
      }
      for (const definition of this.#offered(server)) {
        // A server listing one name twice must not fail the whole pod (the worker refuses duplicates).
        if (routes.has(definition.name)) {
          this.#warn({
            code: "MCP_TOOL_NAME_REFUSED",
            server: server.name,
            message: `MCP server "${server.name}" lists ${definition.name} more than once; only the first is offered`,
          });
          continue;
        }
        routes.set(definition.name, { server, tool: definition.serverName });
        live.push({ name: definition.name, description: definition.description, inputSchema: definition.inputSchema });
      }
    }
    live.sort((a, b) => compareCodeUnits(a.name, b.name));
    const definitions = this.#frozen === undefined ? live : this.#compareFrozen(live, outcomes);
    const tools = definitions
      .slice()
      .sort((a, b) => compareCodeUnits(a.name, b.name))
      .map((definition) => this.#tool(definition, routes));
    this.#tools = tools;
    return tools;
  }

  /** The tools a started server offers: enabled, not disabled, with a name providers accept. */
  #offered(server: McpServer): (ToolDefinition & { serverName: string })[] {
    const { enabledTools, disabledTools } = server.config;
    const out: (ToolDefinition & { serverName: string })[] = [];
    for (const tool of server.listedTools) {
      if (enabledTools !== undefined && !enabledTools.includes(tool.name)) continue;
      if (disabledTools?.includes(tool.name) === true) continue;
      const name = mcpToolName(server.name, tool.name);
      const problem = toolNameProblem(name);
      if (problem !== undefined) {
        this.#warn({
          code: "MCP_TOOL_NAME_REFUSED",
          server: server.name,
          message: `tool "${tool.name}" of MCP server "${server.name}" is left out: its name ${name} ${problem}; shorten the server's name in mcp_servers`,
        });
        continue;
      }
      out.push({
        name,
        serverName: tool.name,
        description: tool.description ?? "",
        inputSchema: tool.inputSchema as Record<string, unknown>,
      });
    }
    return out;
  }

  /** Keeps the frozen definitions and warns for each server whose list differs from them. */
  #compareFrozen(
    live: readonly ToolDefinition[],
    outcomes: PromiseSettledResult<unknown>[],
  ): readonly ToolDefinition[] {
    const frozen = this.#frozen!;
    for (const [i, server] of this.#servers.entries()) {
      if (outcomes[i]!.status === "rejected") continue; // already warned: it did not start
      const prefix = mcpToolPrefix(server.name);
      const before = frozen.filter((definition) => definition.name.startsWith(prefix));
      const now = live.filter((definition) => definition.name.startsWith(prefix));
      if (sameDefinitions(before, now)) continue;
      const names = new Set(now.map((definition) => definition.name));
      const gone = before.filter((definition) => !names.has(definition.name)).map((definition) => definition.name);
      const added = now.filter((definition) => !before.some((b) => b.name === definition.name)).length;
      this.#warn({
        code: "TOOLS_CHANGED",
        server: server.name,
        message:
          `MCP server "${server.name}" now lists other tools than this conversation recorded; ` +
          "the recorded definitions are sent unchanged (the prompt cache stays valid)" +
          (gone.length > 0 ? `; calls to ${gone.join(", ")} will fail` : "") +
          (added > 0 ? `; ${added} new tool(s) are not offered` : "") +
          " — start a new conversation (pod run --new) to use the server's current tools",
      });
    }
    // Servers the conversation had tools from that are no longer configured (a name has no "__").
    const gone = new Map<string, string[]>();
    for (const definition of frozen) {
      if (this.#servers.some((server) => definition.name.startsWith(mcpToolPrefix(server.name)))) continue;
      const server = definition.name.slice("mcp__".length).split("__")[0] ?? "";
      gone.set(server, [...(gone.get(server) ?? []), definition.name]);
    }
    for (const [server, names] of gone) {
      this.#warn({
        code: "TOOLS_CHANGED",
        server,
        message:
          `this conversation recorded tools of MCP server "${server}", which is no longer configured; ` +
          `they are still offered (the prompt cache stays valid), but calls to ${names.join(", ")} will fail` +
          " — start a new conversation (pod run --new) to drop them",
      });
    }
    return frozen;
  }

  #tool(definition: ToolDefinition, routes: ReadonlyMap<string, Route>): Tool {
    const servers = this.#servers;
    const shared = this.#signal;
    return {
      name: definition.name,
      description: definition.description,
      inputSchema: definition.inputSchema,
      async execute(input: unknown, options?: { signal?: AbortSignal | undefined }): Promise<string | ToolOutput> {
        const args = typeof input === "object" && input !== null && !Array.isArray(input) ? input : {};
        // A frozen tool is routed by its server's prefix even when the server did not list it at start.
        const server =
          routes.get(definition.name)?.server ??
          servers.find((candidate) => definition.name.startsWith(mcpToolPrefix(candidate.name)));
        if (server === undefined) {
          throw new McpError(
            "TOOL_VANISHED",
            `${definition.name} is no longer offered: this conversation recorded it, but no configured MCP server provides it now`,
            { tool: definition.name },
          );
        }
        const tool = routes.get(definition.name)?.tool ?? definition.name.slice(mcpToolPrefix(server.name).length);
        const own = options?.signal;
        const signal = own === undefined ? shared : shared === undefined ? own : AbortSignal.any([own, shared]);
        return server.call(tool, args as Record<string, unknown>, signal);
      },
    };
  }

  #warn(warning: McpWarning): void {
    this.#warnings.push(warning);
    this.#onWarning?.(warning);
  }
}
