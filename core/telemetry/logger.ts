import pino, { type Logger } from 'pino';
import { trace } from '@opentelemetry/api';

export type { Logger };

export interface LoggerOptions {
  level: string;
  service: string;
  tenant: string;
  /** Tests pass a stream to capture lines; production writes JSON to stdout. */
  destination?: pino.DestinationStream;
}

/**
 * JSON logs with the service and tenant on every line and, when a span is active, its
 * trace id, so a log line can be joined to its trace. Request ids are added by child
 * loggers (`logger.child({ requestId })`).
 */
export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, tenant: opts.tenant },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin() {
        const span = trace.getActiveSpan();
        if (!span) return {};
        const ctx = span.spanContext();
        return { traceId: ctx.traceId, spanId: ctx.spanId };
      },
      redact: { paths: ['req.headers.authorization', 'req.headers["x-wallet-signature"]'], remove: true },
    },
    opts.destination,
  );
}
