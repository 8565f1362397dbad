// A TCP proxy between a client and a PostgreSQL server on 127.0.0.1 that can cut the
// connection at an exact point of the wire protocol, to make the two sides of an
// ambiguous commit happen on purpose:
// - "before": the client's next append (a Parse message whose SQL calls `append_record(`, or, as
//   version 1 sent it, ends in `FOR KEY SHARE`) is
//   dropped and the connection closed; the server never saw it.
// - "after": the append is forwarded, and the server's answer is dropped and the connection
//   closed once it holds the CommandComplete and ReadyForQuery of that statement: the
//   implicit transaction has committed, and the client never hears so.
// - "before-commit" / "after-commit": the same around the next `COMMIT` (a simple Query
//   message), for the explicit transaction of createSegment.
import { createServer, type Server, type Socket, connect } from "node:net";

export type Cut = "before" | "after" | "before-commit" | "after-commit";

/** Splits a stream of protocol messages (1-byte type, int32 length including itself). */
class Framer {
  #buffer = Buffer.alloc(0);
  #started: boolean;

  constructor(started: boolean) {
    this.#started = started;
  }

  /** The whole messages in `chunk` (and earlier leftovers), each as its raw bytes. */
  push(chunk: Buffer): Buffer[] {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      // The client's first message (startup) has no type byte.
      const header = this.#started ? 5 : 4;
      if (this.#buffer.length < header) break;
      const length = this.#started ? this.#buffer.readInt32BE(1) + 1 : this.#buffer.readInt32BE(0);
      if (this.#buffer.length < length) break;
      out.push(this.#buffer.subarray(0, length));
      this.#buffer = this.#buffer.subarray(length);
      this.#started = true;
    }
    return out;
  }
}

export class CuttingProxy {
  readonly #server: Server;
  readonly #target: number;
  readonly #sockets = new Set<Socket>();
  #cut: Cut | undefined;
  /** How many connections were cut, per kind. */
  readonly cuts = { before: 0, after: 0, "before-commit": 0, "after-commit": 0 };
  port = 0;

  private constructor(target: number) {
    this.#target = target;
    this.#server = createServer((client) => this.#connection(client));
  }

  static async start(targetPort: number): Promise<CuttingProxy> {
    const proxy = new CuttingProxy(targetPort);
    await new Promise<void>((resolve) => proxy.#server.listen(0, "127.0.0.1", resolve));
    const address = proxy.#server.address();
    proxy.port = typeof address === "object" && address !== null ? address.port : 0;
    return proxy;
  }

  /** `postgres://` URL through the proxy. */
  get connectionString(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Arms one cut: the next append on any connection is cut there. */
  arm(cut: Cut): void {
    this.#cut = cut;
  }

  #connection(client: Socket): void {
    const server = connect(this.#target, "127.0.0.1");
    client.setNoDelay(true);
    server.setNoDelay(true);
    this.#sockets.add(client).add(server);
    const drop = () => {
      client.destroy();
      server.destroy();
    };
    client.on("error", drop).on("close", () => {
      this.#sockets.delete(client);
      server.destroy();
    });
    server.on("error", drop).on("close", () => {
      this.#sockets.delete(server);
      client.destroy();
    });
    const fromClient = new Framer(false);
    const fromServer = new Framer(true);
    let appendInFlight = false;
    let cutAfter: "after" | "after-commit" = "after";
    client.on("data", (chunk: Buffer) => {
      for (const message of fromClient.push(chunk)) {
        const isAppend =
          message[0] === 0x50 && (message.includes(".append_record(") || message.includes("FOR KEY SHARE"));
        const isCommit = message[0] === 0x51 && message.subarray(5).toString("latin1").startsWith("COMMIT");
        const cut = this.#cut;
        if ((isAppend && cut === "before") || (isCommit && cut === "before-commit")) {
          this.#cut = undefined;
          this.cuts[cut] += 1;
          drop();
          return;
        }
        if ((isAppend && cut === "after") || (isCommit && cut === "after-commit")) {
          this.#cut = undefined;
          cutAfter = cut;
          appendInFlight = true;
        }
        server.write(message);
      }
    });
    let completed = false;
    server.on("data", (chunk: Buffer) => {
      for (const message of fromServer.push(chunk)) {
        if (appendInFlight) {
          if (message[0] === 0x43) completed = true; // CommandComplete
          if (message[0] === 0x5a && completed) {
            // ReadyForQuery after the append's CommandComplete: committed; the client never learns it.
            this.cuts[cutAfter] += 1;
            drop();
            return;
          }
          continue;
        }
        client.write(message);
      }
    });
  }

  /** Closes every proxied connection and stops listening. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
