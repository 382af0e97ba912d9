// API process entry point (`npm run api`). Tracing starts before http, express and pg load.
import { parseArgsOrExit } from '../core/cli';
import { loadConfigOrExit } from '../core/config';
import { startTracing } from '../core/telemetry/tracing';

const USAGE = `usage: npm run api
  the REST and WebSocket API of one tenant, on API_HOST:API_PORT; reads DATABASE_URL and REDIS_URL
  (every setting: docs/configuration.md). No options besides --help.`;

parseArgsOrExit({ options: { help: { type: 'boolean' } }, strict: true }, USAGE);
const config = loadConfigOrExit();
const tracing = startTracing({ endpoint: config.otel.endpoint, serviceName: config.otel.serviceName ?? 'market-indexer-api', tenant: config.tenantId });
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runApi } = require('./run') as typeof import('./run');
void runApi(config, tracing);
