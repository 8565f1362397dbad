import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { GroupWatchdog } from "./group-watchdog.ts";
import { signalGroup, trackGroup } from "./process-groups.ts";

/** How a stdio server is started. */
export interface StdioLaunch {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to a minimal inherited environment (PATH, HOME, USER, …): secrets of `pod` are not passed on. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

/** Largest single JSON-RPC line accepted from a server; a longer one is a broken server (64 MiB). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How long a server gets to exit after SIGTERM before its group is killed. */
const TERM_GRACE_MS = 500;
/** Bytes of a server's stderr kept for messages about it. */
const STDERR_TAIL_BYTES = 2048;

/**
 * An MCP stdio transport that starts the server as the leader of its own process group,
 * so closing it (or `pod` exiting) ends the whole process tree, not only the first process.
 * A {@link GroupWatchdog} kills the group when `pod` dies without a chance to (SIGKILL).
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  readonly #launch: StdioLaunch;
  #child: ChildProcess | undefined;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #stderr = "";
  #exited: Promise<void> | undefined;
  #closed = false;

  constructor(launch: StdioLaunch) {
    this.#launch = launch;
  }

  /** The last bytes the server wrote to stderr (for messages about a failed server). */
  get stderrTail(): string {
    return this.#stderr.trim();
  }

  start(): Promise<void> {
    const { command, args, env, cwd } = this.#launch;
    // Started first, so the server's group is guarded from the moment it exists.
    const watchdog = GroupWatchdog.start();
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        // `detached`: a session and process group of its own, which also keeps a terminal's
        // Ctrl-C to `pod` from reaching the server before `pod` stops it in order.
        child = spawn(command, [...args], {
          cwd,
          env: { ...getDefaultEnvironment(), ...env },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
          windowsHide: true,
        });
      } catch (error) {
        watchdog.release();
        throw error;
      }
      if (child.pid !== undefined) watchdog.guard(child.pid);
      this.#child = child;
      this.#exited = new Promise((done) => child.once("close", () => done()));
      child.once("error", (error) => {
        watchdog.release();
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        trackGroup(child);
        resolve();
      });
      // After trackGroup's own kill of the group: nothing of it is left to guard.
      child.once("exit", () => watchdog.release());
      child.once("close", () => {
        this.#child = undefined;
        this.onclose?.();
      });
      child.stdout?.on("data", (chunk: Buffer) => this.#read(chunk));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stderr?.on("data", (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || stdin === null || this.#closed) {
      return Promise.reject(new Error("the MCP server process is not running"));
    }
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Ends stdin, asks the group to stop, and kills it when it does not within a moment. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const child = this.#child;
    if (child?.pid !== undefined) {
      child.stdin?.end();
      signalGroup(child.pid, "SIGTERM");
      const timer = setTimeout(() => signalGroup(child.pid!, "SIGKILL"), TERM_GRACE_MS);
      await this.#exited;
      clearTimeout(timer);
    }
    this.#chunks = [];
  }

  /** Splits stdout into lines without re-copying the buffer per chunk (a 10 MB answer stays linear). */
  #read(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      this.#chunks.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.#chunks).toString("utf8").replace(/\r$/, "");
      this.#chunks = [];
      this.#buffered = 0;
      start = newline + 1;
      if (line.trim() === "") continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch (error) {
        this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC: ${String(error)}`));
        continue;
      }
      this.onmessage?.(message);
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    this.#buffered += rest.length;
    if (this.#buffered > MAX_MESSAGE_BYTES) {
      this.#chunks = [];
      this.#buffered = 0;
      this.onerror?.(new Error(`the server sent a message over ${MAX_MESSAGE_BYTES} bytes`));
      // A stream out of step cannot be trusted again: the connection is restarted by its owner.
      void this.close();
      return;
    }
    this.#chunks.push(rest);
  }
}
