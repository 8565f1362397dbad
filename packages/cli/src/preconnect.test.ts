import { readFileSync } from "node:fs";
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { afterEach, describe, expect, test } from "vitest";
import { createHttpFetch, httpFetch } from "./http-fetch.ts";
import { Preconnections } from "./preconnect.ts";

const TLS_DIR = new URL("./__fixtures__/tls/", import.meta.url);
const CERT = readFileSync(new URL("localhost.crt", TLS_DIR), "utf8");
const KEY = readFileSync(new URL("localhost.key", TLS_DIR), "utf8");

/** One connection as the server saw it. */
interface Connection {
  readonly socket: Socket;
  /** How many requests the test had made when the server accepted it. */
  readonly requestsBefore: number;
  /** Everything the client sent on it. */
  data: string;
  servername?: string | false | null;
  alpn?: string | false | null;
}

const servers: { server: Server; connections: Connection[] }[] = [];
afterEach(async () => {
  for (const { server, connections } of servers.splice(0)) {
    for (const connection of connections) connection.socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

let requestsMade = 0;

/**
 * A server that records every connection and its bytes and answers each HTTP request on it
 * with a small JSON body (the request is a head and a Content-Length body). `onConnection`
 * may destroy the socket instead.
 */
async function serve(options: { tls?: boolean; port?: number; onConnection?: (socket: Socket) => boolean } = {}) {
  const connections: Connection[] = [];
  const accepted: ((connection: Connection) => void)[] = [];
  const handle = (socket: Socket) => {
    const connection: Connection = { socket, requestsBefore: requestsMade, data: "" };
    if (options.tls) {
      connection.servername = (socket as TLSSocket).servername;
      connection.alpn = (socket as TLSSocket).alpnProtocol;
    }
    connections.push(connection);
    for (const resolve of accepted.splice(0)) resolve(connection);
    socket.on("error", () => undefined);
    if (options.onConnection?.(socket) === false) return;
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      connection.data += chunk;
      pending += chunk;
      for (;;) {
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(pending.slice(0, end))?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.slice(end + 4 + length);
        const body = JSON.stringify({ n: connections.indexOf(connection) });
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`,
        );
      }
    });
  };
  const server = options.tls ? createTlsServer({ cert: CERT, key: KEY }, handle) : createTcpServer(handle);
  servers.push({ server, connections });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    connections,
    /** The next connection accepted (or the last one, when one was accepted already and none is awaited). */
    nextConnection: () => new Promise<Connection>((resolve) => accepted.push(resolve)),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function post(fetch: typeof httpFetch, url: string): Promise<unknown> {
  requestsMade++;
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"hello":1}',
  });
  return response.json();
}

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const e = error as Error & { cause?: Record<string, unknown> };
    return {
      name: e.name,
      message: e.message,
      cause: e.cause && {
        name: (e.cause as unknown as Error).name,
        code: e.cause.code,
        syscall: e.cause.syscall,
        address: e.cause.address,
        port: e.cause.port,
      },
    };
  }
  throw new Error("expected a rejection");
}

/** A fetch whose pool has preconnected to `server`, once the server accepted the connection. */
async function connectedTo(server: Awaited<ReturnType<typeof serve>>) {
  const pool = new Preconnections();
  const fetch = createHttpFetch({ preconnections: pool });
  const accepted = server.nextConnection();
  const preconnect = pool.open(`http://127.0.0.1:${server.port}/v1`);
  expect(await preconnect.connected).toBe(true);
  return { pool, fetch, preconnect, connection: await accepted };
}

describe("preconnect", () => {
  test("the_first_request_goes_on_the_connection_opened_before_it", async () => {
    const server = await serve();
    const { fetch, preconnect, connection } = await connectedTo(server);
    expect([connection.requestsBefore, connection.data]).toEqual([requestsMade, ""]);

    expect(await post(fetch, `http://127.0.0.1:${server.port}/v1/messages`)).toEqual({ n: 0 });
    expect(await preconnect.released).toBe("taken");
    // A second request reuses the kept-alive connection, as without a preconnect.
    expect(await post(fetch, `http://127.0.0.1:${server.port}/v1/messages`)).toEqual({ n: 0 });
    expect(server.connections).toHaveLength(1);
    expect(connection.data.startsWith("POST /v1/messages HTTP/1.1\r\n")).toBe(true);
    expect(connection.data.split("POST /v1/messages HTTP/1.1\r\n")).toHaveLength(3);
  });

  test("a_request_to_another_origin_does_not_take_the_preconnected_socket", async () => {
    const preconnected = await serve();
    const other = await serve();
    const { pool, fetch, preconnect } = await connectedTo(preconnected);
    expect(await post(fetch, `http://127.0.0.1:${other.port}/v1/messages`)).toEqual({ n: 0 });
    expect(other.connections).toHaveLength(1);
    expect(preconnected.connections.map((c) => c.data)).toEqual([""]);
    await pool.close();
    expect(await preconnect.released).toBe("dropped");
  });

  test("a_refused_preconnect_leaves_the_request_to_connect_and_fail_as_without_it", async () => {
    const port = await closedPort();
    const pool = new Preconnections();
    const preconnect = pool.open(`http://127.0.0.1:${port}/v1`);
    expect([await preconnect.connected, await preconnect.released]).toEqual([false, "dropped"]);
    const url = `http://127.0.0.1:${port}/v1/messages`;
    const withIt = await failure(post(createHttpFetch({ preconnections: pool }), url));
    const without = await failure(post(httpFetch, url));
    expect(withIt).toEqual(without);
    expect(withIt).toMatchObject({ name: "TypeError", message: "fetch failed", cause: { code: "ECONNREFUSED" } });

    // The server comes up after the refused preconnect: the request connects afresh and succeeds.
    const server = await serve({ port });
    expect(await post(createHttpFetch({ preconnections: pool }), url)).toEqual({ n: 0 });
    expect(server.connections).toHaveLength(1);
  });

  test("a_preconnect_the_server_closed_or_that_timed_out_is_never_used", async () => {
    let first = true;
    const server = await serve({
      onConnection: (socket) => {
        if (!first) return true;
        first = false;
        socket.destroy();
        return false;
      },
    });
    const pool = new Preconnections();
    const closed = pool.open(`http://127.0.0.1:${server.port}/v1`);
    expect(await closed.released).toBe("dropped");
    const fetch = createHttpFetch({ preconnections: pool });
    expect(await post(fetch, `http://127.0.0.1:${server.port}/v1/messages`)).toEqual({ n: 1 });
    expect(server.connections.map((c) => c.data.startsWith("POST "))).toEqual([false, true]);

    // The agent's idle timeout (the global agent's 5 s; 1 ms here) drops an unused socket.
    const quick = new Preconnections({ timeout: 1 });
    const idle = quick.open(`http://127.0.0.1:${server.port}/v1`);
    expect(await idle.released).toBe("dropped");
    expect(await post(createHttpFetch({ preconnections: quick }), `http://127.0.0.1:${server.port}/v1/m`)).toEqual({
      n: 3,
    });
    expect(server.connections.map((c) => c.data.startsWith("POST "))).toEqual([false, true, false, true]);
  });

  test("close_destroys_an_unused_socket_and_a_later_open_connects_again", async () => {
    const server = await serve();
    const pool = new Preconnections();
    const closedBy = new Promise((resolve) =>
      server.nextConnection().then((connection) => connection.socket.on("close", resolve)),
    );
    const preconnect = pool.open(`http://127.0.0.1:${server.port}/v1`);
    expect(await preconnect.connected).toBe(true);
    await pool.close();
    expect(await preconnect.released).toBe("dropped");
    await closedBy;
    expect(server.connections.map((c) => c.data)).toEqual([""]);

    const again = pool.open(`http://127.0.0.1:${server.port}/v1`);
    expect(await again.connected).toBe(true);
    expect(await post(createHttpFetch({ preconnections: pool }), `http://127.0.0.1:${server.port}/v1/m`)).toEqual({
      n: 1,
    });
    expect(await again.released).toBe("taken");
  });

  test("urls_that_fetch_refuses_are_not_preconnected", async () => {
    const server = await serve();
    const pool = new Preconnections();
    for (const url of ["not a url", "file:///etc/passwd", `http://user:pw@127.0.0.1:${server.port}/v1`]) {
      expect(await pool.open(url).connected).toBe(false);
    }
    expect(server.connections).toHaveLength(0);
  });
});

describe("preconnect over tls", () => {
  test("the_tls_socket_is_the_one_the_request_would_make_and_carries_the_request", async () => {
    const server = await serve({ tls: true });
    const base = `https://localhost:${server.port}/v1`;
    const pool = new Preconnections({ ca: CERT });
    const preconnect = pool.open(base);
    expect(await preconnect.connected).toBe(true);
    expect(await post(createHttpFetch({ preconnections: pool }), `${base}/messages`)).toEqual({ n: 0 });
    expect(await preconnect.released).toBe("taken");

    // Without a preconnect (the same agent options, nothing opened first): the same handshake.
    const plain = new Preconnections({ ca: CERT });
    const accepted = server.nextConnection();
    const unused = plain.open(`https://localhost:${server.port}/other`);
    expect(await unused.connected).toBe(true);
    await accepted;
    await plain.close();
    expect(await post(createHttpFetch({ preconnections: plain }), `${base}/messages`)).toEqual({ n: 2 });
    const [first, dropped, fresh] = server.connections;
    expect(first?.data.startsWith("POST /v1/messages HTTP/1.1\r\n")).toBe(true);
    expect([dropped?.data, fresh?.data.startsWith("POST /v1/messages HTTP/1.1\r\n")]).toEqual(["", true]);
    // SNI is the host name, and no ALPN is offered, as node:https makes it for the request.
    expect([first?.servername, first?.alpn]).toEqual(["localhost", fresh?.alpn ?? false]);
    expect(fresh?.servername).toBe("localhost");
  });

  test("a_certificate_the_client_does_not_trust_fails_the_request_as_without_a_preconnect", async () => {
    const server = await serve({ tls: true });
    const base = `https://localhost:${server.port}/v1`;
    const pool = new Preconnections();
    const preconnect = pool.open(base);
    expect([await preconnect.connected, await preconnect.released]).toEqual([false, "dropped"]);
    const withIt = await failure(post(createHttpFetch({ preconnections: pool }), `${base}/messages`));
    const without = await failure(post(httpFetch, `${base}/messages`));
    expect(withIt).toEqual(without);
    expect(withIt).toMatchObject({ name: "TypeError", message: "fetch failed" });
    expect(String(withIt.cause?.code)).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
    expect(server.connections.every((c) => c.data === "")).toBe(true);
  });
});
