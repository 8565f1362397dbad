import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/*
 * A local OTLP/HTTP trace receiver for tests: it accepts POST /v1/traces in both encodings and
 * decodes them into one shape. http/json is OTLP's JSON mapping, read as JSON. http/protobuf is
 * read by the small wire-format decoder below, which knows only the fields of
 * opentelemetry/proto/trace/v1/trace.proto (and common, resource) that the tests look at; a test
 * checks it against the JSON encoding of the same conversation, so the two cannot drift apart
 * unnoticed. (No package here ships the OTLP definitions for decoding: the exporter's own
 * serializer only encodes.)
 */

/** An attribute value as the tests see it: string, boolean, number (ints as numbers) or a list. */
export type AttributeValue = string | boolean | number | AttributeValue[] | undefined;

/** One span as either encoding carries it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** The resource's attributes (service.name, …). */
  resource: Record<string, AttributeValue>;
  scope: string;
}

/** One export request as it arrived. */
export interface ReceivedRequest {
  path: string;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  spans: ReceivedSpan[];
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint: string;
  readonly requests: readonly ReceivedRequest[];
  /** Every span received so far, in arrival order. */
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/** Starts a receiver on a free port of 127.0.0.1. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let body = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const contentType = String(req.headers["content-type"] ?? "");
      const spans = contentType.includes("json")
        ? spansFromJson(JSON.parse(body.toString("utf8")))
        : spansFromProto(body);
      requests.push({ path: req.url ?? "", contentType, headers: req.headers, spans });
      // An empty ExportTraceServiceResponse, in the request's encoding.
      res.writeHead(200, {
        "content-type": contentType.includes("json") ? "application/json" : "application/x-protobuf",
      });
      res.end(contentType.includes("json") ? "{}" : Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    spans: () => requests.flatMap((r) => r.spans),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// --- http/json -------------------------------------------------------------------------

type Json = Record<string, unknown>;

function jsonValue(value: Json | undefined): AttributeValue {
  if (value === undefined) return undefined;
  if ("stringValue" in value) return String(value.stringValue);
  if ("boolValue" in value) return Boolean(value.boolValue);
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("arrayValue" in value) return ((value.arrayValue as Json).values as Json[] | undefined)?.map(jsonValue) ?? [];
  return undefined;
}

function jsonAttributes(list: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of (list as Json[] | undefined) ?? []) out[String(kv.key)] = jsonValue(kv.value as Json | undefined);
  return out;
}

/** OTLP/JSON ids are hex strings (the JS exporter may also send base64 when asked not to use hex). */
const jsonId = (id: unknown): string => (typeof id === "string" ? id : "");

function spansFromJson(request: Json): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans as Json[] | undefined) ?? []) {
    const resource = jsonAttributes((rs.resource as Json | undefined)?.attributes);
    for (const ss of (rs.scopeSpans as Json[] | undefined) ?? []) {
      const scope = String((ss.scope as Json | undefined)?.name ?? "");
      for (const span of (ss.spans as Json[] | undefined) ?? []) {
        const status = (span.status as Json | undefined) ?? {};
        spans.push({
          traceId: jsonId(span.traceId),
          spanId: jsonId(span.spanId),
          parentSpanId: jsonId(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          attributes: jsonAttributes(span.attributes),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? "") },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

// --- http/protobuf: a minimal reader of the protobuf wire format -------------------------

/** Fields of one message: number → the raw values in order (varints as bigint, the rest as bytes). */
type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buf: Buffer, at: { pos: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[at.pos++];
    if (byte === undefined) throw new Error("truncated varint");
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const key = Number(readVarint(buf, at));
    const field = key >>> 3;
    const wire = key & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = readVarint(buf, at);
    else if (wire === 1) {
      value = buf.subarray(at.pos, at.pos + 8);
      at.pos += 8;
    } else if (wire === 2) {
      const length = Number(readVarint(buf, at));
      value = buf.subarray(at.pos, at.pos + length);
      at.pos += length;
    } else if (wire === 5) {
      value = buf.subarray(at.pos, at.pos + 4);
      at.pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const bytesOf = (f: Fields, n: number): Buffer[] => (f.get(n) ?? []).filter((v): v is Buffer => Buffer.isBuffer(v));
const firstBytes = (f: Fields, n: number): Buffer | undefined => bytesOf(f, n)[0];
const text = (f: Fields, n: number): string => firstBytes(f, n)?.toString("utf8") ?? "";
const varint = (f: Fields, n: number): bigint => {
  const v = f.get(n)?.[0];
  return typeof v === "bigint" ? v : 0n;
};

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue (1 values). */
function protoValue(buf: Buffer | undefined): AttributeValue {
  if (buf === undefined) return undefined;
  const f = fields(buf);
  if (f.has(1)) return text(f, 1);
  if (f.has(2)) return varint(f, 2) !== 0n;
  if (f.has(3)) return Number(BigInt.asIntN(64, varint(f, 3)));
  if (f.has(4)) return firstBytes(f, 4)!.readDoubleLE(0);
  if (f.has(5)) return bytesOf(fields(firstBytes(f, 5)!), 1).map(protoValue);
  return undefined;
}

/** KeyValue: 1 key, 2 value. */
function protoAttributes(list: Buffer[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const kv of list) {
    const f = fields(kv);
    out[text(f, 1)] = protoValue(firstBytes(f, 2));
  }
  return out;
}

/**
 * ExportTraceServiceRequest: 1 ResourceSpans (1 Resource (1 attributes), 2 ScopeSpans
 * (1 InstrumentationScope (1 name), 2 Span)). Span: 1 trace_id, 2 span_id, 4 parent_span_id,
 * 5 name, 6 kind, 9 attributes, 15 Status (2 message, 3 code).
 */
function spansFromProto(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rsBuf of bytesOf(fields(body), 1)) {
    const rs = fields(rsBuf);
    const resourceBuf = firstBytes(rs, 1);
    const resource = resourceBuf === undefined ? {} : protoAttributes(bytesOf(fields(resourceBuf), 1));
    for (const ssBuf of bytesOf(rs, 2)) {
      const ss = fields(ssBuf);
      const scopeBuf = firstBytes(ss, 1);
      const scope = scopeBuf === undefined ? "" : text(fields(scopeBuf), 1);
      for (const spanBuf of bytesOf(ss, 2)) {
        const span = fields(spanBuf);
        const statusBuf = firstBytes(span, 15);
        const status = statusBuf === undefined ? new Map() : fields(statusBuf);
        spans.push({
          traceId: firstBytes(span, 1)?.toString("hex") ?? "",
          spanId: firstBytes(span, 2)?.toString("hex") ?? "",
          parentSpanId: firstBytes(span, 4)?.toString("hex") ?? "",
          name: text(span, 5),
          kind: Number(varint(span, 6)),
          attributes: protoAttributes(bytesOf(span, 9)),
          status: { code: Number(varint(status, 3)), message: text(status, 2) },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}
