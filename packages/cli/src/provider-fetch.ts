import type { Dispatcher } from "undici";

/** The environment variables a provider's requests are routed by (each also read in lower case, which wins, as curl does). */
export type ProxyEnv = Readonly<Record<string, string | undefined>>;

const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const BODY_HEADERS = ["content-length", "content-type", "content-encoding", "content-language", "content-location"];

function fetchFailed(message: string): TypeError {
  return new TypeError("fetch failed", { cause: new Error(message) });
}

function variable(env: ProxyEnv, name: string): string | undefined {
  const value = env[name.toLowerCase()] ?? env[name];
  return value === undefined || value.trim() === "" ? undefined : value;
}

/**
 * undici's EnvHttpProxyAgent when HTTPS_PROXY or HTTP_PROXY is set (NO_PROXY naming the hosts
 * that bypass it), else undefined: Node's own dispatcher, with undici's package never loaded.
 */
export async function proxyDispatcher(env: ProxyEnv): Promise<Dispatcher | undefined> {
  const httpProxy = variable(env, "HTTP_PROXY");
  const httpsProxy = variable(env, "HTTPS_PROXY");
  if (httpProxy === undefined && httpsProxy === undefined) return undefined;
  const { EnvHttpProxyAgent } = await import("undici");
  const noProxy = variable(env, "NO_PROXY");
  return new EnvHttpProxyAgent({
    // An empty option would make undici read process.env, not the environment given here.
    httpProxy: httpProxy ?? "",
    httpsProxy: httpsProxy ?? httpProxy ?? "",
    noProxy: noProxy ?? "",
  });
}

/** The request a redirect makes of `init`, as fetch does: 303 (and 301/302 after a POST) become a GET without body. */
function redirectedInit(init: RequestInit, status: number): RequestInit {
  const method = (init.method ?? "GET").toUpperCase();
  const toGet = status === 303 ? method !== "HEAD" : (status === 301 || status === 302) && method === "POST";
  if (!toGet) return init;
  const headers = new Headers(init.headers);
  for (const name of BODY_HEADERS) headers.delete(name);
  const { body: _body, ...rest } = init;
  return { ...rest, method: "GET", headers };
}

/**
 * The `fetch` `pod run` gives the AI SDK providers: `globalThis.fetch`, routed through the
 * proxy the environment names, that follows a redirect only within the origin it was sent to,
 * because a redirect elsewhere would carry the API key header to another server.
 */
export function providerFetch(env: ProxyEnv): typeof globalThis.fetch {
  let dispatcher: Promise<Dispatcher | undefined> | undefined;
  return async (input, init = {}) => {
    if (typeof input !== "string" && !(input instanceof URL)) {
      throw new TypeError("pod's fetch takes a URL (a string or URL), not a Request");
    }
    dispatcher ??= proxyDispatcher(env);
    const through = await dispatcher;
    const wanted = init.redirect ?? "follow";
    let url = new URL(input);
    let request: RequestInit = init;
    for (let redirects = 0; ; redirects++) {
      const sent = { ...request, redirect: "manual", ...(through === undefined ? {} : { dispatcher: through }) };
      const response = await globalThis.fetch(url, sent as RequestInit);
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || location === null || wanted === "manual") return response;
      await response.body?.cancel();
      if (wanted === "error") throw fetchFailed(`redirected to ${location}, and redirects are refused`);
      if (redirects === MAX_REDIRECTS) throw fetchFailed(`more than ${MAX_REDIRECTS} redirects`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw fetchFailed(`redirected to ${JSON.stringify(location)}, which is not a URL`);
      }
      if (next.origin !== url.origin) {
        throw fetchFailed(
          `${url.origin} redirected to another server (${next.origin}); the request is not sent there, so its API key stays here: set provider.base_url to the server that answers`,
        );
      }
      request = redirectedInit(request, response.status);
      url = next;
    }
  };
}
