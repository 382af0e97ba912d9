import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { trace } from '@opentelemetry/api';

export type { Logger };

export interface LoggerOptions {
  level: string;
  service: string;
  tenant: string;
  /** LOG_FORMAT: `auto` is pretty when stdout is a terminal (D-351). JSON when absent. */
  format?: 'auto' | 'json' | 'pretty';
  /** Tests pass a stream to capture lines (JSON); otherwise stdout. */
  destination?: pino.DestinationStream;
}

/** What `format` means for this process's stdout. */
export function resolveLogFormat(format: LoggerOptions['format'], isTTY = process.stdout.isTTY === true): 'json' | 'pretty' {
  switch (format ?? 'json') {
    case 'auto':
      return isTTY ? 'pretty' : 'json';
    case 'json':
      return 'json';
    case 'pretty':
      return 'pretty';
    default: {
      const never: never = format as never;
      throw new Error(`unknown log format ${String(never)}`);
    }
  }
}

/**
 * pino-pretty as a synchronous stream in this thread rather than as a worker-thread transport:
 * a line logged just before `process.exit` (a start-up failure) is written, not lost with the
 * worker. The service's name leads each line; the tenant, pid and host are left out (one
 * terminal, one process).
 */
function prettyStdout(colorize: boolean): pino.DestinationStream {
  return pretty({
    sync: true,
    destination: 1,
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,tenant',
    messageFormat: '{service}: {msg}',
  });
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
    opts.destination ?? (resolveLogFormat(opts.format) === 'pretty' ? prettyStdout(process.stdout.isTTY === true) : undefined),
  );
}
