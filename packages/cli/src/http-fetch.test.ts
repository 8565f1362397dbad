import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { createAnthropic } from "@ai-sdk/anthropic";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import { afterEach, describe, expect, test } from "vitest";
import { createHttpFetch, httpFetch } from "./http-fetch.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const servers: { close(): void; closeAllConnections(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A local server; `handle` answers each request after its body has arrived. */
async function serve(handle: (seen: Seen, res: ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      seen.push(request);
      handle(request, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, seen };
}

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
};

async function rejection(promise: Promise<unknown>): Promise<Error & { cause?: Error & { code?: string } }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { cause?: Error & { code?: string } };
  }
  throw new Error("expected a rejection");
}

describe("httpFetch", () => {
  test("a_post_sends_its_body_and_headers_and_reads_the_answer", async () => {
    const server = await serve((_seen, res) =>
      json(res, 201, { ok: "é" }, { "X-Request-Id": "req_1", "set-cookie": "a=1" }),
    );
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "héllo" }] });
    const response = await httpFetch(`${server.base}/v1/messages?x=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "x-api-key": "secret", "user-agent": "ai-sdk/test" },
      body,
    });
    expect([response.status, response.ok, response.statusText, response.redirected]).toEqual([
      201,
      true,
      "Created",
      false,
    ]);
    expect(response.headers.get("x-request-id")).toBe("req_1");
    expect(Object.fromEntries([...response.headers]).connection).toBe("keep-alive");
    expect(await response.json()).toEqual({ ok: "é" });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);

    const [request] = server.seen;
    expect(request).toMatchObject({ method: "POST", url: "/v1/messages?x=1", body });
    expect(request!.headers).toMatchObject({
      "content-type": "application/json",
      "x-api-key": "secret",
      "user-agent": "ai-sdk/test",
      "content-length": String(Buffer.byteLength(body)),
      accept: "*/*",
    });
  });

  test("the_request_carries_what_the_platform_fetch_sends_for_the_same_call", async () => {
    const server = await serve((_seen, res) => json(res, 200, {}));
    const init = {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "user-agent": "ai-sdk/x" },
      body: '{"a":1}',
    };
    await (await httpFetch(`${server.base}/v1/messages`, init)).text();
    await (await fetch(`${server.base}/v1/messages`, init)).text();
    const [ours, platform] = server.seen;
    expect(ours!.body).toBe(platform!.body);
    // The platform adds browser-style headers (accept-language, sec-fetch-mode, accept-encoding); ours does not.
    for (const name of ["content-type", "anthropic-version", "user-agent", "content-length", "accept", "host"]) {
      expect([name, ours!.headers[name]]).toEqual([name, platform!.headers[name]]);
    }
  });

  test("a_streamed_answer_reads_chunk_by_chunk_from_the_body_stream", async () => {
    const server = await serve((_seen, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
      setImmediate(() => {
        res.write("data: 2\n\n");
        res.end("data: [DONE]\n\n");
      });
    });
    const response = await httpFetch(`${server.base}/stream`);
    const text = await new Response(response.body).text();
    expect(text).toBe("data: 1\n\ndata: 2\n\ndata: [DONE]\n\n");
  });

  test("a_compressed_answer_is_decoded", async () => {
    const server = await serve((_seen, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify({ zipped: true })));
    });
    expect(await (await httpFetch(`${server.base}/`)).json()).toEqual({ zipped: true });
  });

  test("an_abort_before_the_call_rejects_with_the_reason_and_sends_nothing", async () => {
    const server = await serve((_seen, res) => json(res, 200, {}));
    const controller = new AbortController();
    controller.abort(new DOMException("stop", "AbortError"));
    const error = await rejection(httpFetch(`${server.base}/`, { signal: controller.signal }));
    expect([error.name, error.message]).toEqual(["AbortError", "stop"]);
    expect(server.seen).toEqual([]);
  });

  test("an_abort_right_after_the_call_sends_nothing", async () => {
    const server = await serve((_seen, res) => json(res, 200, {}));
    const controller = new AbortController();
    const call = httpFetch(`${server.base}/`, { method: "POST", body: "x", signal: controller.signal });
    controller.abort(new DOMException("at once", "AbortError"));
    const error = await rejection(call);
    expect([error.name, error.message]).toEqual(["AbortError", "at once"]);
    // Give a request that slipped out time to arrive: there is none.
    await (await httpFetch(`${server.base}/after`)).text();
    expect(server.seen.map((seen) => seen.url)).toEqual(["/after"]);
  });

  test("an_abort_while_waiting_for_the_answer_rejects_with_the_reason", async () => {
    const controller = new AbortController();
    const server = await serve(() => controller.abort());
    const error = await rejection(
      httpFetch(`${server.base}/`, { method: "POST", body: "x", signal: controller.signal }),
    );
    expect(error.name).toBe("AbortError");
    expect(server.seen).toHaveLength(1);
  });

  test("an_abort_while_reading_the_body_rejects_the_read_with_the_reason", async () => {
    const server = await serve((_seen, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"partial":');
    });
    const controller = new AbortController();
    const response = await httpFetch(`${server.base}/`, { signal: controller.signal });
    const reading = response.text();
    controller.abort(new DOMException("enough", "AbortError"));
    const error = await rejection(reading);
    expect([error.name, error.message]).toEqual(["AbortError", "enough"]);
  });

  test("a_refused_connection_is_fetch_failed_with_the_node_error_as_cause", async () => {
    const server = await serve(() => undefined);
    for (const open of servers.splice(0)) open.close();
    const error = await rejection(httpFetch(`${server.base}/`));
    expect([error.name, error.message, error.cause?.code]).toEqual(["TypeError", "fetch failed", "ECONNREFUSED"]);
  });

  test("a_server_that_stops_mid_answer_fails_the_read", async () => {
    const server = await serve((_seen, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write('{"partial":');
      setImmediate(() => res.socket?.destroy());
    });
    const response = await httpFetch(`${server.base}/`);
    const error = await rejection(response.text());
    expect([error.name, error.message]).toEqual(["TypeError", "terminated"]);
  });

  test("a_silent_server_fails_after_the_idle_timeout_with_undicis_codes", async () => {
    const silent = await serve(() => undefined);
    const quick = createHttpFetch({ idleTimeoutMs: 30 });
    const head = await rejection(quick(`${silent.base}/`));
    expect([head.message, head.cause?.code]).toEqual(["fetch failed", "UND_ERR_HEADERS_TIMEOUT"]);

    const stalls = await serve((_seen, res) => {
      res.writeHead(200);
      res.write("a");
    });
    const response = await quick(`${stalls.base}/`);
    const body = await rejection(response.text());
    expect([body.message, (body.cause as { cause?: { code?: string } }).cause?.code]).toEqual([
      "terminated",
      "UND_ERR_BODY_TIMEOUT",
    ]);
  });

  test("redirects_within_the_origin_are_followed_as_fetch_does", async () => {
    const server = await serve((seen, res) => {
      if (seen.url === "/keep") return json(res, 307, {}, { location: "/kept" });
      if (seen.url === "/other") return json(res, 303, {}, { location: "/got" });
      json(res, 200, { at: seen.url, method: seen.method, body: seen.body });
    });
    const kept = await httpFetch(`${server.base}/keep`, { method: "POST", body: "payload" });
    expect([await kept.json(), kept.redirected, kept.url]).toEqual([
      { at: "/kept", method: "POST", body: "payload" },
      true,
      `${server.base}/kept`,
    ]);
    const got = await httpFetch(`${server.base}/other`, {
      method: "POST",
      body: "payload",
      headers: { "content-type": "text/plain" },
    });
    expect(await got.json()).toEqual({ at: "/got", method: "GET", body: "" });
    expect(server.seen.at(-1)!.headers["content-type"]).toBeUndefined();

    const manual = await httpFetch(`${server.base}/keep`, { method: "POST", body: "x", redirect: "manual" });
    expect([manual.status, manual.headers.get("location")]).toEqual([307, "/kept"]);
    const refused = await rejection(httpFetch(`${server.base}/keep`, { method: "POST", body: "x", redirect: "error" }));
    expect(refused.message).toBe("fetch failed");
  });

  test("a_redirect_to_another_server_is_not_followed_so_the_key_stays_here", async () => {
    const elsewhere = await serve((_seen, res) => json(res, 200, {}));
    const server = await serve((_seen, res) => json(res, 308, {}, { location: `${elsewhere.base}/steal` }));
    const error = await rejection(
      httpFetch(`${server.base}/v1/messages`, { method: "POST", headers: { "x-api-key": "secret" }, body: "{}" }),
    );
    expect(error.message).toBe("fetch failed");
    expect(error.cause?.message).toContain("redirected to another server");
    expect(elsewhere.seen).toEqual([]);
  });

  test("headers_arrive_as_given_and_a_value_node_refuses_is_not_a_network_error", async () => {
    const server = await serve((_seen, res) => json(res, 200, {}));
    await (await httpFetch(`${server.base}/`, { headers: { constructor: "v", toString: "w" } })).text();
    expect([server.seen[0]!.headers.constructor, server.seen[0]!.headers.tostring]).toEqual(["v", "w"]);
    const error = await rejection(httpFetch(`${server.base}/`, { headers: { "x-api-key": "key\u0001" } }));
    expect([error.name, error.message === "fetch failed"]).toEqual(["TypeError", false]);
    expect(server.seen).toHaveLength(1);
  });

  test("a_url_with_credentials_is_refused_as_fetch_does", async () => {
    const server = await serve((_seen, res) => json(res, 200, {}));
    const error = await rejection(httpFetch(server.base.replace("http://", "http://user:secret@")));
    expect(error.message).toContain("credentials");
    expect(server.seen).toEqual([]);
  });

  test("bad_input_is_refused_before_anything_is_sent", async () => {
    await expect(httpFetch("not a url")).rejects.toThrow(TypeError);
    await expect(httpFetch("file:///etc/passwd")).rejects.toThrow("fetch failed");
    await expect(httpFetch(new Request("http://127.0.0.1/") as never)).rejects.toThrow(TypeError);
    await expect(httpFetch("http://127.0.0.1:1/", { method: "POST", body: new FormData() })).rejects.toThrow(TypeError);
    await expect(httpFetch("http://127.0.0.1:1/", { headers: { "bad name": "x" } })).rejects.toThrow(TypeError);
  });

  test("the_anthropic_provider_sends_the_same_request_body_through_it", async () => {
    const fake = await startFakeProvider(() => ({ text: "hi" }));
    try {
      const call = async (fetch?: typeof globalThis.fetch) => {
        const model = createAnthropic({
          baseURL: fake.baseURL,
          apiKey: "k",
          ...(fetch === undefined ? {} : { fetch }),
        })("claude-sonnet-4-5");
        const result = await model.doGenerate({
          prompt: [
            { role: "system", content: "You are a pod." },
            { role: "user", content: [{ type: "text", text: "hello" }] },
          ],
        });
        return result.content;
      };
      const ours = await call(httpFetch);
      const platform = await call();
      expect(ours).toEqual(platform);
      expect(ours).toEqual([{ type: "text", text: "hi" }]);
      const [viaOurs, viaPlatform] = fake.requests;
      expect(viaOurs!.body).toBe(viaPlatform!.body);
      expect(viaOurs!.headers["x-api-key"]).toBe("k");
      expect(viaOurs!.headers["user-agent"]).toBe(viaPlatform!.headers["user-agent"]);
    } finally {
      await fake.close();
    }
  });
});
