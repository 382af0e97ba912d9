import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { resourceFromAttributes } from '@opentelemetry/resources';

export interface Tracing {
  enabled: boolean;
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry when an OTLP endpoint is configured and does nothing otherwise, so
 * a process without a collector pays nothing. Must run before http, express, pg and
 * ioredis are first required: entry points call it on their first line.
 */
export function startTracing(opts: { endpoint: string | undefined; serviceName: string; tenant: string }): Tracing {
  if (!opts.endpoint) return { enabled: false, shutdown: async () => {} };
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.namespace': opts.tenant }),
    traceExporter: new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/$/, '')}/v1/traces` }),
    // Traces only. Without these the SDK also sets up OTLP metric and log exporters by
    // default: metrics are Prometheus' (/metrics), logs go to stdout, and the HTTP
    // instrumentation's histograms cost CPU on every request for nobody.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes would drown the useful traces.
        ignoreIncomingRequestHook: (req) => /^\/(health|ready|metrics)(\?|$)/.test(req.url ?? ''),
      }),
      // No Express instrumentation: without its span per router and handler, GET
      // /markets/current with tracing on went from about 3,100 to 4,000 req/s here (npm run
      // bench -- api-profile). The server span is named by its route template instead
      // (core/telemetry/span-name.ts), so traces still read `GET /api/v1/markets/:marketId`.
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}
