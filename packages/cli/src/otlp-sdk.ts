// Loaded only when an OTLP endpoint is configured (src/tracing.ts): the SDK and both OTLP/HTTP exporters.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { OtlpProtocol, Tracing } from "./tracing.ts";

/**
 * Registers a global tracer provider that batches spans to the OTLP/HTTP endpoint. The
 * exporter reads the endpoint, headers, timeout and compression from the `OTEL_EXPORTER_OTLP_*`
 * variables, the batch processor `OTEL_BSP_*`, the sampler `OTEL_TRACES_SAMPLER`; the resource
 * is `service.name` `pod` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` say otherwise.
 */
export function startOtlpTracing(protocol: OtlpProtocol, version: string): Tracing {
  const exporter = protocol === "http/json" ? new JsonTraceExporter() : new ProtobufTraceExporter();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ "service.name": "pod", "service.version": version }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // A host process (main() called in a service) that registered its own keeps it: the spans go there.
  const ownProvider = trace.setGlobalTracerProvider(provider);
  // So a span started beneath a turn's work (a compaction's summary call) finds the turn as its parent.
  const contextManager = new AsyncLocalStorageContextManager();
  const ownContext = context.setGlobalContextManager(contextManager);
  if (ownContext) contextManager.enable();
  return {
    async shutdown() {
      await provider.shutdown();
      if (ownProvider) trace.disable();
      if (ownContext) context.disable();
    },
  };
}
