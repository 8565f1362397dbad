// A minimal transaction-mode connection pooler (what PgBouncer's `pool_mode = transaction`
// does), for the tests: many client connections share a few server connections, and a
// client holds a server connection only from its first message until the server is idle
// again (ReadyForQuery with status 'I'). Anything kept in a session — named prepared
// statements, SET, session advisory locks, temp tables — leaks between clients or is lost
// here, as it would be behind a real pooler. Trust authentication only; no TLS; no cancel.
import { connect, createServer, type Server, type Socket } from "node:net";

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, "latin1");
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

function int32(...values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => {
    out.writeInt32BE(value, i * 4);
  });
  return out;
}

/** Splits a stream into protocol messages; `startup` when the first message has no type byte. */
class Framer {
  #buffer = Buffer.alloc(0);
  #startup: boolean;
  constructor(startup: boolean) {
    this.#startup = startup;
  }
  push(chunk: Buffer): Buffer[] {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      const header = this.#startup ? 4 : 5;
      if (this.#buffer.length < header) break;
      const length = this.#startup ? this.#buffer.readInt32BE(0) : this.#buffer.readInt32BE(1) + 1;
      if (this.#buffer.length < length) break;
      out.push(this.#buffer.subarray(0, length));
      this.#buffer = this.#buffer.subarray(length);
      this.#startup = false;
    }
    return out;
  }
}

interface ServerConnection {
  readonly socket: Socket;
  readonly pid: number;
  onMessage: ((message: Buffer) => void) | undefined;
}

export class TransactionPooler {
  readonly #listener: Server;
  readonly #target: number;
  readonly #size: number;
  readonly #idle: ServerConnection[] = [];
  readonly #waiting: ((server: ServerConnection) => void)[] = [];
  readonly #sockets = new Set<Socket>();
  #opened = 0;
  /** Backend pids of every server connection this pooler opened. */
  readonly backendPids = new Set<number>();
  /** Client connections accepted so far. */
  clients = 0;
  port = 0;

  private constructor(target: number, size: number) {
    this.#target = target;
    this.#size = size;
    this.#listener = createServer((client) => this.#client(client));
  }

  /** A pooler on a free port of 127.0.0.1 in front of the server at `targetPort`, with at most `size` server connections. */
  static async start(targetPort: number, size: number): Promise<TransactionPooler> {
    const pooler = new TransactionPooler(targetPort, size);
    await new Promise<void>((resolve) => pooler.#listener.listen(0, "127.0.0.1", resolve));
    const address = pooler.#listener.address();
    pooler.port = typeof address === "object" && address !== null ? address.port : 0;
    return pooler;
  }

  get connectionString(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  #openServer(): Promise<ServerConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.#target, "127.0.0.1");
      socket.setNoDelay(true);
      this.#sockets.add(socket);
      const framer = new Framer(false);
      let pid = 0;
      let server: ServerConnection | undefined;
      socket.on("error", reject);
      socket.on("close", () => {
        this.#sockets.delete(socket);
        if (server !== undefined) {
          const at = this.#idle.indexOf(server);
          if (at !== -1) this.#idle.splice(at, 1);
        }
        this.#opened -= 1;
      });
      socket.on("connect", () => {
        const params = Buffer.from("user\0postgres\0database\0postgres\0client_encoding\0UTF8\0\0");
        socket.write(Buffer.concat([int32(params.length + 8, 196608), params]));
      });
      socket.on("data", (chunk: Buffer) => {
        for (const m of framer.push(chunk)) {
          if (server !== undefined) {
            server.onMessage?.(m);
            continue;
          }
          if (m[0] === 0x4b) pid = m.readInt32BE(5); // BackendKeyData
          if (m[0] === 0x45) reject(new Error(`the server refused the pooler: ${m.toString("latin1")}`));
          if (m[0] === 0x5a) {
            server = { socket, pid, onMessage: undefined };
            this.backendPids.add(pid);
            resolve(server);
          }
        }
      });
    });
  }

  async #acquire(): Promise<ServerConnection> {
    const idle = this.#idle.pop();
    if (idle !== undefined) return idle;
    if (this.#opened < this.#size) {
      this.#opened += 1;
      return this.#openServer();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(server: ServerConnection): void {
    server.onMessage = undefined;
    if (server.socket.destroyed) return;
    const next = this.#waiting.shift();
    if (next !== undefined) next(server);
    else this.#idle.push(server);
  }

  #client(client: Socket): void {
    this.clients += 1;
    client.setNoDelay(true);
    this.#sockets.add(client);
    const framer = new Framer(true);
    let started = false;
    let server: ServerConnection | undefined;
    let queue = Promise.resolve();
    const drop = () => {
      client.destroy();
      // A client gone mid-transaction leaves its server connection in an unknown state.
      server?.socket.destroy();
      server = undefined;
    };
    client.on("error", drop).on("close", () => {
      this.#sockets.delete(client);
      drop();
    });
    client.on("data", (chunk: Buffer) => {
      for (const m of framer.push(chunk)) {
        if (!started) {
          started = true;
          // Startup: answered by the pooler itself (trust), as a pooler does.
          client.write(
            Buffer.concat([
              message("R", int32(0)),
              message("S", Buffer.from("server_encoding\0UTF8\0")),
              message("S", Buffer.from("client_encoding\0UTF8\0")),
              message("S", Buffer.from("integer_datetimes\0on\0")),
              message("K", int32(0, 0)),
              message("Z", Buffer.from("I")),
            ]),
          );
          continue;
        }
        if (m[0] === 0x58) {
          // Terminate: the server connection stays with the pooler.
          client.end();
          continue;
        }
        queue = queue.then(async () => {
          if (client.destroyed) return;
          if (server === undefined) {
            const got = await this.#acquire();
            if (client.destroyed) {
              this.#release(got);
              return;
            }
            server = got;
            got.onMessage = (reply) => {
              client.write(reply);
              if (reply[0] === 0x5a && reply[5] === 0x49 && server === got) {
                // Idle, no transaction open: the server connection goes back to the pool.
                server = undefined;
                this.#release(got);
              }
            };
          }
          server.socket.write(m);
        });
      }
    });
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#listener.close(() => resolve()));
  }
}
