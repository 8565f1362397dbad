import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { type CountingProxy, startCountingProxy } from "./__fixtures__/http-proxy.ts";
import { providerFetch } from "./provider-fetch.ts";

interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  body: string;
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A local server: `route` answers each request; every request is recorded. */
async function serve(route: (seen: Seen, answer: ServerResponse) => void): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((incoming: IncomingMessage, answer) => {
    let body = "";
    incoming.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    incoming.on("end", () => {
      const one = {
        method: incoming.method ?? "",
        url: incoming.url ?? "",
        key: incoming.headers["x-api-key"] as string | undefined,
        body,
      };
      seen.push(one);
      route(one, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const ok = (_: Seen, answer: ServerResponse) => answer.end("ok");
const post = { method: "POST", headers: { "x-api-key": "secret", "content-type": "application/json" }, body: "{}" };

async function proxy(): Promise<CountingProxy> {
  const started = await startCountingProxy();
  closing.push(() => started.close());
  return started;
}

describe("redirects", () => {
  test("a_redirect_to_another_origin_is_refused_so_the_key_never_reaches_it", async () => {
    const elsewhere = await serve(ok);
    const provider = await serve((_, answer) => {
      answer.writeHead(307, { location: `${elsewhere.origin}/v1/messages` }).end();
    });
    const failure = await providerFetch({})(`${provider.origin}/v1/messages`, post).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe("fetch failed");
    expect(String((failure as TypeError).cause)).toContain(`redirected to another server (${elsewhere.origin})`);
    expect(provider.seen.map((s) => s.key)).toEqual(["secret"]);
    expect(elsewhere.seen).toEqual([]);
  });

  test("redirects_within_the_origin_are_followed_as_fetch_follows_them", async () => {
    const provider = await serve((seen, answer) => {
      if (seen.url === "/keep") answer.writeHead(307, { location: "/kept" }).end();
      else if (seen.url === "/see-other") answer.writeHead(303, { location: "/got" }).end();
      else answer.end(`${seen.method} ${seen.url} ${seen.body}`);
    });
    const fetch = providerFetch({});
    expect(await (await fetch(`${provider.origin}/keep`, post)).text()).toBe("POST /kept {}");
    expect(await (await fetch(`${provider.origin}/see-other`, post)).text()).toBe("GET /got ");
    expect(provider.seen.map((s) => s.key)).toEqual(["secret", "secret", "secret", "secret"]);
    const manual = await fetch(`${provider.origin}/keep`, { ...post, redirect: "manual" });
    expect([manual.status, manual.headers.get("location")]).toEqual([307, "/kept"]);
    await expect(fetch(`${provider.origin}/keep`, { ...post, redirect: "error" })).rejects.toThrow("fetch failed");
  });

  test("a_redirect_loop_fails_after_twenty_hops", async () => {
    const provider = await serve((_, answer) => answer.writeHead(302, { location: "/again" }).end());
    const failure = await providerFetch({})(`${provider.origin}/start`).catch((error: unknown) => error);
    expect(String((failure as TypeError).cause)).toContain("more than 20 redirects");
    expect(provider.seen).toHaveLength(21);
  });
});

describe("proxies", () => {
  test("http_proxy_carries_the_requests_and_no_proxy_bypasses_it", async () => {
    const provider = await serve(ok);
    const through = await proxy();
    expect(await (await providerFetch({ HTTP_PROXY: through.url })(`${provider.origin}/v1`, post)).text()).toBe("ok");
    expect(through.seen).toHaveLength(1);
    expect(through.seen[0]).toMatch(/^(CONNECT 127\.0\.0\.1:\d+|POST http:\/\/127\.0\.0\.1:\d+\/v1)$/);
    // The lower-case name works too; NO_PROXY (either case) names hosts that bypass the proxy.
    expect((await providerFetch({ http_proxy: through.url })(`${provider.origin}/v1`, post)).status).toBe(200);
    expect(through.seen).toHaveLength(2);
    for (const env of [
      { HTTP_PROXY: through.url, NO_PROXY: "127.0.0.1" },
      { HTTP_PROXY: through.url, no_proxy: "*" },
    ]) {
      expect((await providerFetch(env)(`${provider.origin}/v1`, post)).status).toBe(200);
    }
    expect(through.seen).toHaveLength(2);
    expect(provider.seen).toHaveLength(4);
  });

  test("without_a_proxy_variable_nothing_goes_through_one", async () => {
    const provider = await serve(ok);
    const through = await proxy();
    for (const env of [{}, { HTTP_PROXY: "" }, { NO_PROXY: through.url }]) {
      expect((await providerFetch(env)(`${provider.origin}/v1`, post)).status).toBe(200);
    }
    expect([through.seen, provider.seen.length]).toEqual([[], 3]);
  });

  test("https_proxy_is_used_for_https_and_http_proxy_for_http", async () => {
    const provider = await serve(ok);
    const https = await proxy();
    // An http URL does not take HTTPS_PROXY; it goes direct when HTTP_PROXY is unset.
    expect((await providerFetch({ HTTPS_PROXY: https.url })(`${provider.origin}/v1`, post)).status).toBe(200);
    expect(https.seen).toEqual([]);
  });
});
