// API process entry point (`npm run api`). Tracing starts before http, express and pg load.
import { loadConfigOrExit } from '../core/config';
import { startTracing } from '../core/telemetry/tracing';

const config = loadConfigOrExit();
const tracing = startTracing({ endpoint: config.otel.endpoint, serviceName: config.otel.serviceName ?? 'market-indexer-api', tenant: config.tenantId });
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runApi } = require('./run') as typeof import('./run');
void runApi(config, tracing);
