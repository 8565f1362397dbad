/*
 * `pod run` / `pod resume` tracing: spans are exported over OTLP/HTTP only when an OTLP
 * endpoint variable is set. Then, and only then, the OpenTelemetry SDK and the exporter are
 * loaded (./otlp-sdk.ts, its own bundle file); otherwise the libraries' spans stay the
 * API's no-ops and nothing of the SDK is read.
 */

import { podVersion } from "./version.ts";

/** The OTLP/HTTP encodings `pod` exports in. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** What the environment asks of tracing: nothing, an export, or a setting pod cannot honour. */
export type TracingRequest =
  | { readonly kind: "off" }
  | { readonly kind: "export"; readonly protocol: OtlpProtocol }
  | { readonly kind: "unsupported"; readonly message: string };

type Env = Readonly<Record<string, string | undefined>>;

const set = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
};

/**
 * Reads the standard variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` turn export on; `OTEL_SDK_DISABLED=true` or an
 * `OTEL_TRACES_EXPORTER` without `otlp` turn it off; the protocol is
 * `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`.
 */
export function tracingRequest(env: Env): TracingRequest {
  if (set(env.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return { kind: "off" };
  const endpoint = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (endpoint === undefined) return { kind: "off" };
  const exporters = set(env.OTEL_TRACES_EXPORTER);
  if (exporters !== undefined && !exporters.split(",").some((name) => name.trim() === "otlp")) return { kind: "off" };
  const protocol =
    set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? set(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf";
  if (protocol === "http/protobuf" || protocol === "http/json") return { kind: "export", protocol };
  return {
    kind: "unsupported",
    message: `OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}" is not one pod exports in; no spans are sent: use http/protobuf or http/json`,
  };
}

/** The exporting tracer provider of one `pod run`; `shutdown` sends what is left and stops it. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Starts exporting when the environment asks for it (the SDK is imported only then), or
 * returns undefined; a setting pod cannot honour goes to `warn` (OTLP_UNSUPPORTED) and exports nothing.
 */
export async function startTracing(
  env: Env,
  warn: (warning: { code: string; message: string }) => void,
): Promise<Tracing | undefined> {
  const request = tracingRequest(env);
  if (request.kind === "off") return undefined;
  if (request.kind === "unsupported") {
    warn({ code: "OTLP_UNSUPPORTED", message: request.message });
    return undefined;
  }
  const { startOtlpTracing } = await import("./otlp-sdk.ts");
  return startOtlpTracing(request.protocol, podVersion());
}

/** Where a provider's requests go, for the `server.address` and `server.port` of model-call spans. */
export function providerServer(
  kind: string,
  baseURL: string | undefined,
): { serverAddress?: string; serverPort?: number } {
  const url =
    baseURL ??
    (kind === "anthropic" ? "https://api.anthropic.com" : kind === "openai" ? "https://api.openai.com" : undefined);
  if (url === undefined) return {};
  try {
    const { hostname, port, protocol } = new URL(url);
    const known = port === "" ? (protocol === "https:" ? 443 : protocol === "http:" ? 80 : undefined) : Number(port);
    return { serverAddress: hostname, ...(known === undefined ? {} : { serverPort: known }) };
  } catch {
    return {};
  }
}

/** How long a flush may hold up an exit forced by a second Ctrl-C. */
export const FORCED_EXIT_FLUSH_MS = 2000;

/** Flushes and stops `tracing`, never longer than `limitMs` and never throwing: an exit must not wait on a collector. */
export async function flushTracing(tracing: Tracing | undefined, limitMs?: number): Promise<void> {
  if (tracing === undefined) return;
  const done = tracing.shutdown().catch(() => undefined);
  if (limitMs === undefined) return done;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, limitMs);
  });
  await Promise.race([done, late]);
  clearTimeout(timer);
}
