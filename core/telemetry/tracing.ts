import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
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
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes would drown the useful traces.
        ignoreIncomingRequestHook: (req) => /^\/(health|ready|metrics)(\?|$)/.test(req.url ?? ''),
      }),
      // Routers and handlers keep their spans; one per middleware (request id, metrics,
      // timeout, ...) only adds noise to every trace. The server span names the route.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new PgInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}
