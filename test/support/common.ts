import { createShutdown, type Common } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';

/** A Common for in-process tests: real config validation, silent logs, its own registry. */
export function testCommon(env: Record<string, string> = {}): Common {
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const logger = createLogger({ level: config.logLevel, service: 'test', tenant: config.tenantId });
  return { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
}
