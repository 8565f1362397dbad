import { errorText } from "@insomnia/errors";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolOutput } from "@insomnia/worker";
import { McpError } from "./mcp-error.ts";
import { resultOutput } from "./result-text.ts";
import { DEFAULT_STARTUP_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS } from "./server-config.ts";
import type { McpServerConfig } from "./server-config.ts";
import { loadSdk } from "./sdk.ts";
import type { Sdk } from "./sdk.ts";
import type { ProcessGroupStdioTransport } from "./stdio-transport.ts";

/** Where a server is in its life. */
export type McpServerState = "not-started" | "starting" | "ready" | "failed" | "stopped";

/** What a server needs from its surroundings. */
export interface McpServerContext {
  /** Default working directory of stdio servers. */
  readonly cwd: string;
  /** Where `headers_from_env` values are read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Name and version this client gives servers at initialize. */
  readonly clientInfo: { readonly name: string; readonly version: string };
  /** Largest text result, in UTF-8 bytes. */
  readonly maxResultBytes: number;
}

interface Connection {
  readonly sdk: Sdk;
  readonly client: Client;
  readonly transport: Transport;
  /** Tools the server listed when this connection started. */
  readonly tools: readonly SdkTool[];
}

/** A timer that rejects after `ms`, cancelled by `clear()`. */
function deadline(ms: number, error: () => Error): { promise: Promise<never>; clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

/**
 * One MCP server: started (at most `startup_timeout_ms`), its tools listed once per start,
 * calls bounded by `tool_timeout_ms` and the caller's signal. A call that times out, meets a
 * crash or gets a malformed answer drops the connection; the next call starts it again once.
 */
export class McpServer {
  readonly config: McpServerConfig;
  readonly #context: McpServerContext;
  #state: McpServerState = "not-started";
  #connection: Connection | undefined;
  #starting: Promise<Connection> | undefined;
  /** True after a failure: the next call may start the server once more. */
  #mayRestart = false;
  /** True while a call restarts the server (a failure then allows no further attempt). */
  #restarting = false;
  /** Set by close(): nothing starts again. */
  #stopped = false;
  #lastError: string | undefined;
  readonly #closing = new Set<Promise<void>>();

  constructor(config: McpServerConfig, context: McpServerContext) {
    this.config = config;
    this.#context = context;
  }

  get name(): string {
    return this.config.name;
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** Why the server failed last, when it did. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** The tools the running server listed at its (last) start; empty when it is not running. */
  get listedTools(): readonly SdkTool[] {
    return this.#connection?.tools ?? [];
  }

  /** Starts the server and lists its tools; rejects with SERVER_UNAVAILABLE after the startup timeout. */
  start(): Promise<Connection> {
    if (this.#connection !== undefined) return Promise.resolve(this.#connection);
    if (this.#stopped) return Promise.reject(this.#unavailable("the pod closed it"));
    this.#starting ??= this.#startOnce().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #startOnce(): Promise<Connection> {
    this.#state = "starting";
    const timeoutMs = this.config.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    let transport: Transport | undefined;
    let expired = false;
    // The deadline covers loading the SDK too: it is part of starting the first server.
    const limit = deadline(timeoutMs, () => new Error(`it did not start and list its tools within ${timeoutMs} ms`));
    try {
      const connect = async (): Promise<Connection> => {
        const sdk = await loadSdk();
        // Past the deadline nothing is started: the catch below could not stop it any more.
        if (expired) throw new Error("the startup deadline passed");
        const client = new sdk.Client(this.#context.clientInfo, { capabilities: {} });
        transport = this.#transport(sdk);
        await client.connect(transport, { timeout: timeoutMs });
        const tools: SdkTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return { sdk, client, transport, tools };
      };
      const connection = await Promise.race([connect(), limit.promise]);
      if (this.#stopped) {
        this.#drop(connection.transport);
        throw this.#unavailable("the pod closed it");
      }
      this.#connection = connection;
      this.#state = "ready";
      this.#lastError = undefined;
      // The client's own handler (it fails pending requests) runs first.
      const onclose = connection.transport.onclose;
      connection.transport.onclose = () => {
        onclose?.();
        this.#lost(connection, "the server closed the connection");
      };
      return connection;
    } catch (error) {
      expired = true;
      if (transport !== undefined) this.#drop(transport);
      if (!this.#stopped) {
        // One more attempt is made at the next call (the first start, or a restart, failed).
        this.#mayRestart = !this.#restarting;
        this.#state = "failed";
      }
      const stderr = stderrTail(transport);
      this.#lastError = `${errorText(error)}${stderr === "" ? "" : ` (its stderr: ${lastLine(stderr)})`}`;
      throw McpError.is(error) ? error : this.#unavailable(this.#lastError, error);
    } finally {
      limit.clear();
    }
  }

  #transport(sdk: Sdk): Transport {
    const transport = this.config.transport;
    if (transport.type === "stdio") {
      return new sdk.ProcessGroupStdioTransport({
        command: transport.command,
        args: transport.args ?? [],
        env: transport.env ?? {},
        cwd: transport.cwd ?? this.#context.cwd,
      });
    }
    const headers: Record<string, string> = {};
    for (const [header, variable] of Object.entries(transport.headersFromEnv ?? {})) {
      const value = this.#context.env[variable];
      if (value === undefined || value === "") {
        throw new Error(`header ${header} needs the environment variable ${variable}, which is not set`);
      }
      headers[header] = value;
    }
    return new sdk.StreamableHTTPClientTransport(new URL(transport.url), { requestInit: { headers } });
  }

  /**
   * Calls one of the server's tools (its own name) and returns the text the model sees.
   * Throws an McpError (an `isError` result for the model) when the call fails.
   */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string | ToolOutput> {
    if (isAborted(signal)) throw this.#aborted(tool, signal?.reason);
    let connection = this.#connection;
    if (connection === undefined) {
      if (this.#state === "failed" && !this.#mayRestart) {
        throw this.#unavailable(this.#lastError ?? "it is not running");
      }
      this.#mayRestart = false;
      this.#restarting = true;
      try {
        connection = await this.start();
      } finally {
        this.#restarting = false;
      }
    }
    if (!connection.tools.some((listed) => listed.name === tool)) {
      throw new McpError("TOOL_VANISHED", `MCP server "${this.name}" does not offer ${tool} any more`, {
        server: this.name,
      });
    }
    const timeoutMs = this.config.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    let result: Awaited<ReturnType<Client["callTool"]>>;
    try {
      result = await connection.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: timeoutMs,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (isAborted(signal)) throw this.#aborted(tool, error);
      throw this.#failure(connection, tool, timeoutMs, error);
    }
    const content = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : undefined;
    if (content === undefined) {
      throw this.#failure(connection, tool, timeoutMs, new Error("the result has no content list"));
    }
    const output = resultOutput(content, result.structuredContent, this.#context.maxResultBytes);
    const text = typeof output === "string" ? output : output.content;
    if (result.isError === true)
      throw new McpError("TOOL_FAILED", text === "" ? `${tool} failed` : text, { server: this.name });
    return output;
  }

  /** Drops a connection after a failed call (the next call starts the server once more) and says why. */
  #failure(connection: Connection, tool: string, timeoutMs: number, error: unknown): McpError {
    const { ErrorCode, McpError: SdkMcpError } = connection.sdk;
    const code = error instanceof SdkMcpError ? error.code : undefined;
    let mcp: McpError;
    if (code === ErrorCode.RequestTimeout) {
      mcp = new McpError(
        "TOOL_TIMEOUT",
        `${tool} did not answer within ${timeoutMs} ms (tool_timeout_ms); the server is restarted for the next call`,
        {
          server: this.name,
          cause: error,
        },
      );
    } else if (code === ErrorCode.ConnectionClosed || this.#connection !== connection) {
      mcp = this.#unavailable(`it stopped during the call to ${tool}; it is restarted for the next call`, error);
    } else if (code !== undefined) {
      // A JSON-RPC error answer is the server refusing this call, not a broken server.
      return new McpError("TOOL_FAILED", `${tool} failed: ${errorText(error)}`, { server: this.name, cause: error });
    } else {
      mcp = new McpError(
        "MALFORMED_RESULT",
        `${tool} answered something that is not a tool result (${errorText(error)}); the server is restarted for the next call`,
        {
          server: this.name,
          cause: error,
        },
      );
    }
    this.#lost(connection, mcp.detail);
    return mcp;
  }

  /** Forgets a broken connection and stops its process; the next call may start it once more. */
  #lost(connection: Connection, why: string): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    if (!this.#stopped) {
      this.#state = "failed";
      this.#mayRestart = true;
      this.#lastError = why;
    }
    this.#drop(connection.transport);
  }

  #drop(transport: Transport): void {
    const closing = transport
      .close()
      .catch(() => undefined)
      .finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
  }

  #aborted(tool: string, cause: unknown): McpError {
    return new McpError("ABORTED", `the call to ${tool} was stopped: the turn was interrupted`, {
      server: this.name,
      cause,
    });
  }

  #unavailable(why: string, cause?: unknown): McpError {
    return new McpError("SERVER_UNAVAILABLE", `MCP server "${this.name}" is not available: ${why}`, {
      server: this.name,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  /** Stops the server (its whole process tree for stdio) and waits until it is gone. */
  async close(): Promise<void> {
    this.#state = "stopped";
    this.#stopped = true;
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection !== undefined) this.#drop(connection.transport);
    await this.#starting?.catch(() => undefined);
    while (this.#closing.size > 0) await Promise.all([...this.#closing]);
  }
}

/** The last stderr of a stdio server's transport ("" for HTTP or before it started). */
function stderrTail(transport: Transport | undefined): string {
  return (transport as Partial<ProcessGroupStdioTransport> | undefined)?.stderrTail ?? "";
}

/** A function, so the check after an await is not narrowed away by the one before it. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function lastLine(text: string): string {
  return text.split("\n").at(-1)!.slice(0, 300);
}
