import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { resourceFromAttributes } from '@opentelemetry/resources';

export interface Tracing {
  enabled: boolean;
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry when an OTLP endpoint is configured and does nothing otherwise, so
 * a process without a collector pays nothing. Must run before pg and ioredis are first
 * required: entry points call it on their first line.
 */
export function startTracing(opts: { endpoint: string | undefined; serviceName: string; tenant: string }): Tracing {
  if (!opts.endpoint) return { enabled: false, shutdown: async () => {} };
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.namespace': opts.tenant }),
    traceExporter: new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/$/, '')}/v1/traces` }),
    // Traces only. Without these the SDK also sets up OTLP metric and log exporters by
    // default: metrics are Prometheus' (/metrics) and logs go to stdout. (OTLP/protobuf was
    // no cheaper per request than OTLP/JSON in npm run bench -- api-profile.)
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // No HTTP or Express auto-instrumentation: both processes open their server spans in
      // their own first middleware (core/telemetry/http-span.ts, decision D-61). The HTTP
      // instrumentation never saw the RPC source's fetch calls; of outgoing HTTP it gave only
      // a span per logsSubscribe WebSocket handshake.
      // Only under a parent span (ioredis' default too): a query of an unsampled request, or
      // one outside any request or batch, is not traced at all (D-85).
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}
