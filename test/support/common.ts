import { createShutdown, type Common } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';

/**
 * A Common for in-process tests: real config validation, its own registry, silent logs; or,
 * with `logTo`, every line the configured level lets through (LOG_LEVEL, the default one unless
 * `env` names it) handed to `logTo`, for suites that check what was logged.
 *
 * An in-process indexer shares its event loop with the suite (its API, its fixtures): on a
 * loaded machine a 7 s pause without renewing the writer lease is a stalled Jest worker, not the
 * hang the lease guards against, so the lease is a minute unless `env` sets it (the lease's own
 * suites do).
 */
const IN_PROCESS_LEASE = { INDEXER_LEASE_DURATION_MS: '60000', INDEXER_LEASE_RENEW_DEADLINE_MS: '45000', INDEXER_LEASE_RETRY_PERIOD_MS: '2000' };

export function testCommon(env: Record<string, string> = {}, opts: { logTo?: (line: string) => void } = {}): Common {
  const config = loadConfig({ ...IN_PROCESS_LEASE, ...(opts.logTo ? {} : { LOG_LEVEL: 'silent' }), ...env });
  const destination = opts.logTo && { write: opts.logTo };
  const logger = createLogger({ level: config.logLevel, service: 'test', tenant: config.tenantId, destination });
  return { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
}
