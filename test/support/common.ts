import { createShutdown, type Common } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';

/**
 * A Common for in-process tests: real config validation, its own registry, silent logs; or,
 * with `logTo`, every line the configured level lets through (LOG_LEVEL, the default one unless
 * `env` names it) handed to `logTo`, for suites that check what was logged.
 */
export function testCommon(env: Record<string, string> = {}, opts: { logTo?: (line: string) => void } = {}): Common {
  const config = loadConfig(opts.logTo ? env : { LOG_LEVEL: 'silent', ...env });
  const destination = opts.logTo && { write: opts.logTo };
  const logger = createLogger({ level: config.logLevel, service: 'test', tenant: config.tenantId, destination });
  return { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
}
