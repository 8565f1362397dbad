import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { inject } from "vitest";

/** Options of a writer child process (see writer-child.mjs). */
export interface ChildOptions {
  readonly connectionString: string;
  readonly podId: string;
  readonly mode: "append" | "commands" | "migrate";
  readonly leaseMs?: number;
  readonly schema?: string;
  readonly segmentId?: string;
  readonly count?: number;
  readonly from?: number;
}

/** The n-th record the writer child appends (the same function as in writer-child.mjs). */
export function childRecord(n: number): { type: "message"; message: { n: number; text: string } } {
  return { type: "message", message: { n, text: `record ${n}: ✓ "quoted" \\ back` } };
}

/** A writer in another process, read line by line. */
export class ChildWriter {
  readonly process: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<number | string>;
  #stderr = "";
  #waiters: (() => void)[] = [];
  #read = 0;

  constructor(options: ChildOptions) {
    const { distDir } = inject("pg");
    this.process = spawn(
      process.execPath,
      [join(import.meta.dirname, "writer-child.mjs"), join(distDir, "index.js"), JSON.stringify(options)],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    let buffer = "";
    this.process.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      this.lines.push(...parts);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.process.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.#stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.process.once("exit", (code, signal) => {
        for (const wake of this.#waiters.splice(0)) wake();
        resolve(code ?? signal ?? "?");
      });
    });
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Resolves once a line matching `test` has been printed (lines before it are consumed); throws if the child exits first. */
  async waitFor(test: (line: string) => boolean): Promise<string> {
    for (;;) {
      while (this.#read < this.lines.length) {
        const line = this.lines[this.#read] as string;
        this.#read += 1;
        if (test(line)) return line;
      }
      if (this.process.exitCode !== null || this.process.signalCode !== null) {
        throw new Error(
          `the writer child exited (${this.process.exitCode ?? this.process.signalCode}):\n${this.#stderr}`,
        );
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Sends one command line (mode "commands") and returns its answer. */
  async command(line: string): Promise<string> {
    this.process.stdin?.write(`${line}\n`);
    return this.waitFor(() => true);
  }

  /** Numbers of the records the child reported as acknowledged. */
  acked(): number[] {
    return this.lines.flatMap((line) => (line.startsWith("ack ") ? [Number(line.slice(4))] : []));
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.process.kill(signal);
  }
}
