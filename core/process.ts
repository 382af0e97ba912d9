import { createShutdown, type Common } from './common';
import { requiredSettings, settingSpec, type Config, type SourceType } from './config';
import { createLogger } from './telemetry/logger';
import { createMetrics, METRIC_LABELS, type MetricService } from './telemetry/metrics';
import type { Tracing } from './telemetry/tracing';

/** The Common object of a process, with SIGTERM/SIGINT wired to its shutdown. */
export function createCommon(config: Config, service: MetricService, tracing?: Tracing): Common {
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, service, tenant: config.tenantId });
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

/**
 * In production a process refuses to start without a setting it needs given (the catalog's
 * `requiredBy`): a default such as RPC_URL's local validator is never a deployment's (D-210).
 * DATABASE_URL and REDIS_URL have their own refusals (REDIS_URL's can be waived, D-54).
 */
export function requireSettings(config: Config, env: NodeJS.ProcessEnv, process: 'api' | 'indexer', source?: SourceType): void {
  if (config.nodeEnv !== 'production') return;
  const missing = requiredSettings(process, source).filter((n) => n !== 'DATABASE_URL' && n !== 'REDIS_URL' && !env[n]);
  if (!missing.length) return;
  const who = process === 'api' ? 'the API process' : `the indexer with --source ${source}`;
  exitWith(`${who} in production needs ${missing.map((n) => `${n} (${settingSpec(n).description})`).join('; ')}`);
}
