import type { ChildProcess } from "node:child_process";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type GroupLaunch, launchInGroup } from "./group-launch.ts";
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
export const MAX_MESSAGE_BYTES: number = 64 * 1024 * 1024;
/** How long a server gets to exit after the end of its input before it is sent SIGTERM. */
const INPUT_END_GRACE_MS = 500;
/** How long a server asked with SIGTERM gets to finish (flush, clean up) before SIGKILL; only a server that ignores SIGTERM waits it out. */
const SIGTERM_GRACE_MS = 2_000;
/** Bytes of a server's stderr kept for messages about it. */
const STDERR_TAIL_BYTES = 2048;

/**
 * An MCP stdio transport that starts the server as the leader of its own process group,
 * so closing it (or `pod` exiting) ends the whole process tree, not only the first process.
 * A guard process kills the group when `pod` dies without a chance to (SIGKILL): see
 * {@link launchInGroup}.
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
  /** Settles once the server is gone and its group was killed. */
  #gone: Promise<void> | undefined;
  #started: GroupLaunch | undefined;
  #untrack: (() => void) | undefined;
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
    let launch: GroupLaunch;
    try {
      launch = launchInGroup(command, args, { cwd, env: { ...getDefaultEnvironment(), ...env } });
    } catch (error) {
      return Promise.reject(error);
    }
    const { child } = launch;
    this.#started = launch;
    this.#child = child;
    child.on("error", (error) => this.onerror?.(error));
    child.stdout?.on("data", (chunk: Buffer) => this.#read(chunk));
    child.stdout?.on("error", (error) => this.onerror?.(error));
    child.stdin?.on("error", (error) => this.onerror?.(error));
    child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
    });
    // The server is gone when its stdout closes (or whatever holds it exits): then what is left of
    // its group is killed, the guard ends, and the connection is closed.
    const stdoutClosed = new Promise<void>((done) => {
      if (child.stdout === null) done();
      else child.stdout.once("close", () => done());
    });
    const exited = new Promise<void>((done) => child.once("close", () => done()));
    this.#gone = Promise.race([stdoutClosed, exited]).then(async () => {
      const group = await launch.group.catch(() => undefined);
      if (group !== undefined) signalGroup(group, "SIGKILL");
      this.#untrack?.();
      launch.release();
      this.#child = undefined;
      this.onclose?.();
    });
    return launch.group.then((group) => {
      this.#untrack = trackGroup(group);
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

  /**
   * Stops the server the way the MCP spec's stdio shutdown says: ends its input, then asks its
   * group with SIGTERM if it has not exited within a moment, then kills the group.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const started = this.#started;
    const gone = this.#gone;
    if (started !== undefined && this.#child !== undefined && gone !== undefined) {
      this.#child.stdin?.end();
      // Known at once, or never when the server could not start (then its guard is ended).
      const group = await started.group.catch(() => undefined);
      if (group === undefined) {
        started.child.kill("SIGKILL");
      } else if (!(await settlesWithin(gone, INPUT_END_GRACE_MS))) {
        signalGroup(group, "SIGTERM");
        if (!(await settlesWithin(gone, SIGTERM_GRACE_MS))) signalGroup(group, "SIGKILL");
      }
      await gone;
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

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
