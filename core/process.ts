import { createShutdown, type Common } from './common';
import type { Config } from './config';
import { createLogger } from './telemetry/logger';
import { createMetrics, METRIC_LABELS, type MetricService } from './telemetry/metrics';
import type { Tracing } from './telemetry/tracing';

/** The Common object of a process, with SIGTERM/SIGINT wired to its shutdown. */
export function createCommon(config: Config, service: MetricService, tracing?: Tracing): Common {
  const logger = createLogger({ level: config.logLevel, service, tenant: config.tenantId });
  const metrics = createMetrics({ defaultLabels: { [METRIC_LABELS.service]: service, [METRIC_LABELS.tenant]: config.tenantId } });
  const shutdown = createShutdown(logger);
  if (tracing) shutdown.add('tracing', () => tracing.shutdown());
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => {
      void shutdown.run(sig).then(() => process.exit(0));
    });
  }
  return { config, logger, metrics, shutdown };
}

/** A start-up refusal: one clear line on stderr, exit 1. */
export function exitWith(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

/**
 * Production refuses the per-process stand-ins (embedded PostgreSQL, in-memory nonces, limits
 * and bus) unless ALLOW_EMBEDDED_STORES=true says it is deliberate (decision D-54).
 */
export function requireAllowed(config: Config, line: string): void {
  if (config.nodeEnv === 'production' && !config.allowEmbeddedStores) exitWith(`${line}; set ALLOW_EMBEDDED_STORES=true to run anyway`);
}
