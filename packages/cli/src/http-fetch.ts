import type { ClientRequest, IncomingMessage, RequestOptions } from "node:http";
import type { Readable } from "node:stream";
import { FetchHeaders, type FetchHeadersInit } from "./fetch-headers.ts";
import { Preconnections } from "./preconnect.ts";

/*
 * The `fetch` that `pod run` gives the AI SDK providers: node:http and node:https, so a
 * `pod run` never loads Node's built-in undici (the global `fetch`), which costs about as
 * much as starting Node (see fetch-headers.ts). It does what the providers need of fetch, as
 * undici does it:
 *
 * - a string or byte body, sent with its Content-Length; any method;
 * - the answer's status, headers, `text()`, `json()`, `arrayBuffer()` and `body` (a
 *   ReadableStream, for streamed answers), read once;
 * - `signal`: aborting rejects with the signal's reason and closes the connection, also
 *   while the body is being read;
 * - a connection that fails rejects with `TypeError("fetch failed")` whose `cause` is Node's
 *   error (ECONNREFUSED, ECONNRESET, …), which the providers treat as a network error worth
 *   retrying; a server silent for `idleTimeoutMs` (default 300 s, undici's headers and body
 *   timeouts) fails the same way, with the cause's code UND_ERR_HEADERS_TIMEOUT or
 *   UND_ERR_BODY_TIMEOUT as undici names them;
 * - redirects (301, 302, 303, 307, 308) are followed up to 20 times, as fetch does, but only
 *   to the same origin: a redirect elsewhere fails instead of sending the API key to another
 *   server. `redirect: "manual"` returns the redirect, `"error"` fails on it.
 *
 * It sends no Accept-Encoding, so answers come uncompressed; one that is compressed anyway
 * (gzip, deflate, br) is decoded. A URL with credentials in it is refused, as fetch does. A
 * caller must read or cancel every answer's body: an unread one keeps its connection, and
 * so the process, open until the server closes it (the providers always read them).
 *
 * With `preconnections`, a request to an origin opened there (preconnect.ts, which `pod run`
 * does as soon as it knows the provider's URL) takes the socket already connected to it, and
 * that origin's requests share that pool's keep-alive agent; every other request, and every
 * request when nothing was preconnected, goes through Node's global agent as before. Either
 * way the request, its bytes and its errors are the same; only the handshake came earlier.
 */

/** `fetch`'s signature; a `Request` as input is refused (the providers pass URLs). */
export type HttpFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface HttpFetchOptions {
  /** Fail when the server sends nothing for this long, waiting for headers or body (default 300,000). */
  readonly idleTimeoutMs?: number;
  /** Preconnected origins whose sockets (and agent) the requests to them use (default: none). */
  readonly preconnections?: Preconnections;
}

const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function fetchFailed(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

function codedError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

function requestBody(body: RequestInit["body"]): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError("pod's fetch sends a string or bytes as a request body, not a form or a stream");
}

function requestHeaders(init: RequestInit["headers"], body: Buffer | undefined): Record<string, string> {
  // FetchHeaders gives each name once (set-cookie aside, which a request does not send).
  const headers: Record<string, string> = Object.create(null);
  for (const [name, value] of new FetchHeaders(init as FetchHeadersInit | undefined)) {
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  headers.accept ??= "*/*";
  if (body !== undefined) headers["content-length"] = String(body.length);
  return headers;
}

function responseHeaders(message: IncomingMessage): FetchHeaders {
  const headers = new FetchHeaders();
  const raw = message.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  return headers;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** The answer's body, decompressed when the server compressed it anyway. */
async function decodedBody(message: IncomingMessage, method: string): Promise<Readable> {
  const encoding = (message.headers["content-encoding"] ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return message;
  // These answers have no body to decode, whatever they say it is encoded with.
  if (method === "HEAD" || message.statusCode === 204 || message.statusCode === 304) return message;
  const zlib = await import("node:zlib");
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (decoder === undefined) return message;
  const { pipeline } = await import("node:stream");
  // pipeline forwards an error of either side to the other and handles both.
  return pipeline(message, decoder, () => undefined);
}

/** A web stream of a Node stream's chunks, pulled as it is read. */
function webStream(stream: Readable): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stream.on("data", (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) stream.pause();
      });
      stream.on("end", () => controller.close());
      stream.on("error", (error) => controller.error(error));
      stream.pause();
    },
    pull() {
      stream.resume();
    },
    cancel() {
      stream.destroy();
    },
  });
}

/** A fetch `Response` over one IncomingMessage: status, headers, and a body read once. */
class HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: FetchHeaders;
  readonly url: string;
  readonly redirected: boolean;
  readonly type = "basic";
  readonly #signal: AbortSignal | undefined;
  #stream: Readable | undefined;
  #web: ReadableStream<Uint8Array> | undefined;
  #used = false;

  constructor(head: IncomingMessage, stream: Readable, at: { url: string; redirected: boolean; signal?: AbortSignal }) {
    this.status = head.statusCode ?? 0;
    this.statusText = head.statusMessage ?? "";
    this.ok = this.status >= 200 && this.status <= 299;
    this.headers = responseHeaders(head);
    this.url = at.url;
    this.redirected = at.redirected;
    this.#signal = at.signal;
    this.#stream = stream;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  /** The body as a web stream (made on first use: web streams cost a little to load). */
  get body(): ReadableStream<Uint8Array> {
    this.#web ??= webStream(this.#take());
    return this.#web;
  }

  #take(): Readable {
    const stream = this.#stream;
    if (stream === undefined) throw new TypeError("Body is unusable: the body was already read");
    this.#stream = undefined;
    return stream;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    const text = (await this.#bytes()).toString("utf8");
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async #bytes(): Promise<Buffer> {
    if (this.#used) throw new TypeError("Body is unusable: the body was already read");
    this.#used = true;
    const source: AsyncIterable<Uint8Array> = this.#web ?? this.#take();
    const chunks: Uint8Array[] = [];
    try {
      for await (const chunk of source) chunks.push(chunk);
    } catch (error) {
      // An abort rejects with the signal's reason, as fetch does; anything else is fetch's "terminated".
      throw this.#signal?.aborted ? error : new TypeError("terminated", { cause: error });
    }
    return Buffer.concat(chunks);
  }
}

interface Hop {
  readonly url: URL;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
}

/** One request and its answer's head; the body is left to the response. */
async function send(
  hop: Hop,
  signal: AbortSignal | undefined,
  idleTimeoutMs: number,
  preconnections: Preconnections | undefined,
): Promise<IncomingMessage> {
  const transport = hop.url.protocol === "https:" ? await import("node:https") : await import("node:http");
  const agent = await preconnections?.agentFor(hop.url);
  return new Promise<IncomingMessage>((resolve, reject) => {
    // Aborted while node:http was loading (or between redirects): nothing is sent.
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const options: RequestOptions = { method: hop.method, headers: hop.headers, ...(agent ? { agent } : {}) };
    let request: ClientRequest;
    try {
      request = transport.request(hop.url, options);
    } catch (error) {
      // A header Node refuses (ERR_INVALID_CHAR) is the caller's mistake, not the network's:
      // thrown as it is, so no one retries it.
      reject(error);
      return;
    }
    let answered: IncomingMessage | undefined;
    const onAbort = () => {
      const reason = abortReason(signal!);
      request.destroy();
      answered?.destroy(reason as Error);
      reject(reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => signal?.removeEventListener("abort", onAbort);
    request.setTimeout(idleTimeoutMs, () => {
      const error =
        answered === undefined
          ? codedError(`no answer's head within ${idleTimeoutMs} ms`, "UND_ERR_HEADERS_TIMEOUT")
          : codedError(`no byte of the answer's body for ${idleTimeoutMs} ms`, "UND_ERR_BODY_TIMEOUT");
      request.destroy(error);
      answered?.destroy(fetchFailed(error));
    });
    request.on("error", (error) => {
      done();
      reject(fetchFailed(error));
    });
    request.on("response", (message) => {
      answered = message;
      message.on("close", done);
      // Errors reach whoever reads the body; unread, they must not crash the process.
      message.on("error", () => undefined);
      resolve(message);
    });
    request.end(hop.body);
    warmWebStreamsWhileWaiting();
  });
}

let webStreamsWarm = false;

/**
 * Loads Node's web streams (the `ReadableStream` of every answer's `body`, which the providers
 * read) once, after the first request is sent: a model takes far longer to answer than the
 * load takes, so it costs the answer nothing, while loading them before the request would
 * delay it (the bundles' TransformStream defers them for that reason, lazy-transform-stream.ts).
 */
function warmWebStreamsWhileWaiting(): void {
  if (webStreamsWarm) return;
  webStreamsWarm = true;
  setImmediate(() => globalThis.ReadableStream).unref();
}

/** The next hop of a redirect, as fetch makes it (303, and 301/302 after a POST, become a GET without body). */
function redirected(hop: Hop, status: number, location: URL): Hop {
  const toGet = status === 303 ? hop.method !== "HEAD" : (status === 301 || status === 302) && hop.method === "POST";
  if (!toGet) return { ...hop, url: location };
  const headers = { ...hop.headers };
  for (const name of ["content-length", "content-type", "content-encoding", "content-language", "content-location"])
    delete headers[name];
  return { url: location, method: "GET", headers, body: undefined };
}

/** A fetch for the providers over node:http and node:https (see the top of this file). */
export function createHttpFetch(options: HttpFetchOptions = {}): HttpFetch {
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const { preconnections } = options;
  return async (input, init = {}) => {
    if (typeof input !== "string" && !(input instanceof URL)) {
      throw new TypeError("pod's fetch takes a URL (a string or URL), not a Request");
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw abortReason(signal);
    let url: URL;
    try {
      url = new URL(String(input));
    } catch (cause) {
      throw new TypeError(`Invalid URL: ${String(input)}`, { cause });
    }
    if (url.username !== "" || url.password !== "") {
      throw new TypeError("Request cannot be constructed from a URL that includes credentials");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw fetchFailed(new Error(`${url.protocol} URLs are not fetched; use http: or https:`));
    }
    const body = requestBody(init.body);
    let hop: Hop = {
      url,
      method: (init.method ?? "GET").toUpperCase(),
      headers: requestHeaders(init.headers, body),
      body,
    };
    for (let redirects = 0; ; redirects++) {
      const message = await send(hop, signal, idleTimeoutMs, preconnections);
      const location = message.headers.location;
      if (!REDIRECTS.has(message.statusCode ?? 0) || location === undefined || init.redirect === "manual") {
        const at = { url: hop.url.href, redirected: redirects > 0, ...(signal === undefined ? {} : { signal }) };
        return new HttpResponse(message, await decodedBody(message, hop.method), at) as unknown as Response;
      }
      message.resume();
      if (init.redirect === "error")
        throw fetchFailed(new Error(`redirected to ${location}, and redirects are refused`));
      if (redirects === MAX_REDIRECTS) throw fetchFailed(new Error(`more than ${MAX_REDIRECTS} redirects`));
      let next: URL;
      try {
        next = new URL(location, hop.url);
      } catch (cause) {
        throw fetchFailed(new Error(`redirected to ${JSON.stringify(location)}, which is not a URL`, { cause }));
      }
      if (next.origin !== hop.url.origin) {
        throw fetchFailed(
          new Error(
            `${hop.url.origin} redirected to another server (${next.origin}); the request is not sent there, so its API key stays here: set provider.base_url to the server that answers`,
          ),
        );
      }
      hop = redirected(hop, message.statusCode!, next);
    }
  };
}

/** The origins `pod run` preconnects to (`preconnectProvider` of provider-model.ts); `httpFetch` takes their sockets. */
export const httpPreconnections = new Preconnections();

/** The fetch `pod run` gives every provider. */
export const httpFetch: HttpFetch = createHttpFetch({ preconnections: httpPreconnections });
