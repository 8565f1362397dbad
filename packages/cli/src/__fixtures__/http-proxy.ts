import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

/** A local HTTP proxy (CONNECT tunnels and plain forwarding) that records what passes through it. */
export interface CountingProxy {
  /** `http://127.0.0.1:<port>`, for HTTP_PROXY / HTTPS_PROXY. */
  readonly url: string;
  /** One entry per request or tunnel: `CONNECT host:port`, or `GET http://…` for a forwarded request. */
  readonly seen: string[];
  close(): Promise<void>;
}

/** Starts a {@link CountingProxy} on 127.0.0.1. */
export async function startCountingProxy(): Promise<CountingProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((incoming: IncomingMessage, answer) => {
    seen.push(`${incoming.method} ${incoming.url}`);
    const forwarded = request(incoming.url ?? "", { method: incoming.method, headers: incoming.headers }, (reply) => {
      answer.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(answer);
    });
    forwarded.on("error", () => answer.destroy());
    incoming.pipe(forwarded);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("connect", (incoming: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push(`CONNECT ${incoming.url}`);
    const { hostname, port } = new URL(`http://${incoming.url}`);
    const target = connect(Number(port), hostname.replace(/^\[|\]$/g, ""), () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      target.write(head);
      target.pipe(client);
      client.pipe(target);
    });
    sockets.add(target);
    for (const socket of [client, target]) {
      socket.on("error", () => undefined);
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        target.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
