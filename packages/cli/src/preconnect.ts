import type { Agent, AgentOptions as HttpAgentOptions, ClientRequestArgs } from "node:http";
import type { AgentOptions as HttpsAgentOptions } from "node:https";
import type { Socket } from "node:net";

/*
 * Preconnect: `pod run` starts the TCP connection (and for https the TLS handshake) to the
 * model's API as soon as it knows where the first request goes, so the handshake's round
 * trips overlap loading the manifest, the prompt, the segment store and the provider package
 * instead of following them. It is a hint and nothing more:
 *
 * - The socket is made by the same node:http/node:https Agent code a request's socket is,
 *   from the options Node computes for a request to that URL (host, port, SNI servername,
 *   the agent's keep-alive and timeout options, its CA set and TLS session cache): no ALPN,
 *   as Node's https sends none, and the same certificate checks, which fail the same way.
 * - Nothing is written on it but the handshake. The first request to that origin whose
 *   agent key (Agent#getName) matches takes it; one that is for another origin, or a socket
 *   that failed, ended, closed, timed out, or received a byte before any request, is never
 *   handed out: the request connects as it does without a preconnect, and so fails (or not)
 *   exactly as it would have.
 * - Unused, it keeps nothing alive: it is unref()ed until a request takes it, errors are
 *   caught, it is destroyed after the agent's idle timeout, and `close()` destroys it.
 * - Requests to a preconnected origin go through one Agent made with the global agent's
 *   options, so later requests reuse the connection (keep-alive) as they do today. When the
 *   global agent is not Node's own (replaced by a library) or routes through a proxy (Node
 *   22.21+/24 with NODE_USE_ENV_PROXY or --use-env-proxy), nothing is preconnected and every
 *   request goes through the global agent as before. Node 20's node:http honours no proxy
 *   variable, so the preconnect does not either.
 */

type Transport = typeof import("node:http") | typeof import("node:https");

/** Options of the agents (node:https's include the TLS ones, e.g. `ca`). */
export type AgentOptions = HttpAgentOptions & HttpsAgentOptions;

/** What the Agent class has beyond its typings: `options` and the documented `getName`. */
interface AgentInternals {
  readonly options: AgentOptions & Record<string, unknown>;
  readonly defaultPort: number;
  readonly keepAlive: boolean;
  readonly keepAliveMsecs: number;
  getName(options: object): string;
}

/** What became of a preconnect: for tests and for anyone who wants to wait for the handshake. */
export interface Preconnect {
  /** True once the TCP (for https, TLS) handshake is done and no request took the socket yet; false when it failed or was dropped first. */
  readonly connected: Promise<boolean>;
  /** "taken" when a request got the socket, "dropped" when it was closed unused (or never opened). */
  readonly released: Promise<"taken" | "dropped">;
}

const NOTHING: Preconnect = { connected: Promise.resolve(false), released: Promise.resolve("dropped") };

/** The preconnected socket an agent holds until a request takes it. */
interface Spare extends Preconnect {
  readonly name: string;
  readonly socket: Socket;
  /** Set when it must never be handed out (failed, ended, closed, timed out, dropped). */
  unusable: boolean;
  /** Removes the spare's listeners and settles its promises. */
  readonly release: (how: "taken" | "dropped") => void;
}

function proxied(transport: Transport): boolean {
  const options = (transport.globalAgent as unknown as AgentInternals).options ?? {};
  const flags = `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`;
  return (
    options.proxyEnv !== undefined || (process.env.NODE_USE_ENV_PROXY ?? "") !== "" || flags.includes("--use-env-proxy")
  );
}

/** An Agent (http or https) that hands its preconnected socket to the first request for the same key. */
function preconnectingAgent(transport: Transport, extra: AgentOptions) {
  const Base = transport.Agent as unknown as typeof Agent;
  class PreconnectingAgent extends Base {
    #spare: Spare | undefined;

    /** Starts connecting to `url`'s origin unless a socket for it is already open or opening. */
    warm(url: URL): Preconnect {
      const self = this as unknown as AgentInternals & Agent;
      const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
      const port = url.port === "" ? self.defaultPort : Number(url.port);
      // As ClientRequest and Agent#createSocket build them (Node's _http_client.js, _http_agent.js).
      const options: Record<string, unknown> = { host, port, ...self.options };
      // normalizeServerName: the Host header's name, none for an IP address.
      if (options.servername === undefined) options.servername = isIp(host) ? "" : host;
      const name = self.getName(options);
      options._agentKey = name;
      options.encoding = null;
      if (self.keepAlive) {
        options.keepAlive = self.keepAlive;
        options.keepAliveInitialDelay = self.keepAliveMsecs;
      }
      if (this.#spare !== undefined && !this.#spare.unusable) return this.#spare;
      // A connection to reuse is there already (kept alive, or in use by a request).
      if ((self.freeSockets[name]?.length ?? 0) > 0 || (self.sockets[name]?.length ?? 0) > 0) return NOTHING;
      const socket = super.createConnection(options as ClientRequestArgs) as Socket;
      socket.unref();
      let settleConnected: (connected: boolean) => void = () => undefined;
      let settleReleased: (how: "taken" | "dropped") => void = () => undefined;
      const ready = url.protocol === "https:" ? "secureConnect" : "connect";
      const drop = () => {
        if (this.#spare === spare) this.#spare = undefined;
        spare.release("dropped");
        socket.destroy();
      };
      const connected = () => settleConnected(!spare.unusable);
      const spare: Spare = {
        name,
        socket,
        unusable: false,
        connected: new Promise<boolean>((resolve) => (settleConnected = resolve)),
        released: new Promise<"taken" | "dropped">((resolve) => (settleReleased = resolve)),
        release: (how) => {
          spare.unusable = true;
          for (const event of ["error", "end", "close", "timeout"]) socket.off(event, drop);
          socket.off(ready, connected);
          settleConnected(false);
          settleReleased(how);
        },
      };
      for (const event of ["error", "end", "close", "timeout"]) socket.on(event, drop);
      socket.once(ready, connected);
      this.#spare = spare;
      return spare;
    }

    /** Destroys the preconnected socket if no request took it. */
    drop(): void {
      const spare = this.#spare;
      if (spare === undefined) return;
      this.#spare = undefined;
      spare.release("dropped");
      spare.socket.destroy();
    }

    override createConnection(
      options: ClientRequestArgs,
      callback?: Parameters<Agent["createConnection"]>[1],
    ): ReturnType<Agent["createConnection"]> {
      const spare = this.#spare;
      const name = (this as unknown as AgentInternals).getName(options);
      if (spare !== undefined && spare.name === name) {
        this.#spare = undefined;
        const socket = spare.socket;
        // A byte before the request (readableLength) would be read as its answer: never hand that over.
        const usable =
          !spare.unusable &&
          !socket.destroyed &&
          socket.writable &&
          !socket.readableEnded &&
          socket.readableLength === 0;
        spare.release(usable ? "taken" : "dropped");
        if (usable) {
          // From here it is the request's socket, as a fresh one would be: ref()ed, errors the request's.
          socket.ref();
          // Had it no handle yet, unref() would have waited for 'connect': that must not unref it now.
          socket.off("connect", socket.unref);
          return socket;
        }
        socket.destroy();
      }
      return super.createConnection(options, callback);
    }
  }
  return new PreconnectingAgent({ ...(transport.globalAgent as unknown as AgentInternals).options, ...extra });
}

type PreconnectingAgent = ReturnType<typeof preconnectingAgent>;

function isIp(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(":");
}

/** Preconnected origins, and the agents their requests go through (see the top of this file). */
export class Preconnections {
  readonly #agents = new Map<string, Promise<PreconnectingAgent | undefined>>();
  readonly #extra: AgentOptions;

  /** `agentOptions` are added to the global agent's (tests pass a `ca`); they apply to the origin's requests too. */
  constructor(agentOptions: AgentOptions = {}) {
    this.#extra = agentOptions;
  }

  /**
   * Starts the TCP (and TLS) handshake with `url`'s origin and returns at once. Only call it
   * for a URL the request may go to: the check of where a key may be sent comes first. The
   * promises (which never reject) say what became of the socket.
   */
  open(url: string | URL): Preconnect {
    let target: URL;
    try {
      target = new URL(String(url));
    } catch {
      return NOTHING;
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") return NOTHING;
    if (target.username !== "" || target.password !== "") return NOTHING;
    let agent = this.#agents.get(target.origin);
    if (agent === undefined) {
      agent = (target.protocol === "https:" ? import("node:https") : import("node:http")).then((transport) => {
        const stock = Object.getPrototypeOf(transport.globalAgent) === transport.Agent.prototype;
        return stock && !proxied(transport) ? preconnectingAgent(transport, this.#extra) : undefined;
      });
      this.#agents.set(target.origin, agent);
    }
    const started = agent.then((found) => found?.warm(target) ?? NOTHING).catch(() => NOTHING);
    return {
      connected: started.then((preconnect) => preconnect.connected),
      released: started.then((preconnect) => preconnect.released),
    };
  }

  /** The agent for requests to `url`: this pool's for a preconnected origin, else undefined (the global agent). */
  agentFor(url: URL): Promise<Agent | undefined> | undefined {
    return this.#agents.get(url.origin);
  }

  /** Destroys every preconnected socket no request took; connections in use or kept alive stay. */
  async close(): Promise<void> {
    for (const agent of this.#agents.values()) (await agent.catch(() => undefined))?.drop();
  }
}
