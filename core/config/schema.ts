import Joi from 'joi';

/**
 * One entry per environment variable. `docs/configuration.md` mirrors this table and a
 * test keeps the two in step, so a setting cannot be added without being documented.
 */
const positiveInt = () => Joi.number().integer().min(1).empty('');
const port = () => Joi.number().integer().min(0).max(65535).empty('');
const base58Address = () =>
  Joi.string()
    .pattern(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'base58 address')
    .empty('');

/**
 * Rows the indexer's row cache holds (D-62). Measured at 700–2,000 bytes of heap per cached
 * row or wallet, so about 70–200 MB when full; the working set of the simulated chain of
 * `npm run bench -- indexer` is a few thousand.
 */
export const DEFAULT_INDEXER_CACHE_ROWS = 100_000;
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;

export const TENANT_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

export const envSchema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'production', 'test').empty('').default('development'),
  LOG_LEVEL: Joi.string()
    .valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent')
    .empty('')
    .default('info'),

  TENANT_ID: Joi.string().pattern(TENANT_PATTERN, 'lowercase DNS label of at most 40 characters').empty('').default('default'),
  CHAIN_ID: Joi.string().pattern(/^[a-z0-9][a-z0-9:_-]{0,63}$/, 'chain identifier').empty('').default('solana-mainnet'),
  PROGRAM_ID: base58Address().default('HnWM49tJ92G7gTfFSkwnoyC7yMaJNatS9d7Vn1v5BEWy'),

  DATABASE_URL: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }).empty(''),
  DATABASE_POOL_MAX: positiveInt().max(200).default(10),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).empty(''),
  REDIS_COMMAND_TIMEOUT_MS: positiveInt().min(10).max(60_000).default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
  DATA_DIR: Joi.string().max(4096).empty('').default('.data'),
  ALLOW_EMBEDDED_STORES: Joi.boolean().truthy('true', '1').falsy('false', '0').empty('').default(false),
  RPC_URL: Joi.string().uri({ scheme: ['http', 'https'] }).empty('').default('http://127.0.0.1:8899'),
  RPC_WS_URL: Joi.string().uri({ scheme: ['ws', 'wss'] }).empty(''),

  PUBLIC_HOSTS: Joi.string()
    .pattern(/^[A-Za-z0-9.-]+(:[0-9]+)?(,[A-Za-z0-9.-]+(:[0-9]+)?)*$/, 'comma-separated host names')
    .empty('')
    .default('localhost'),
  TRUST_PROXY: Joi.alternatives()
    .try(
      Joi.boolean().truthy('true').falsy('false'),
      Joi.number().integer().min(0).max(10),
      Joi.string().pattern(/^[0-9a-fA-F:./,a-z]+$/, 'hop count, true/false, or comma-separated addresses/subnets'),
    )
    .empty('')
    .default(false),

  API_HOST: Joi.string().hostname().empty('').default('0.0.0.0'),
  API_PORT: port().default(3000),
  INDEXER_PORT: port().default(3001),
  INDEXER_CACHE_ROWS: Joi.number().integer().min(0).max(10_000_000).empty('').default(DEFAULT_INDEXER_CACHE_ROWS),

  // Redis counts whole seconds: windows are rounded up to a whole number of seconds.
  RATE_LIMIT_WINDOW_MS: positiveInt().min(1000).default(60_000),
  PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: positiveInt().default(300),
  PUBLIC_READ_RATE_LIMIT_WINDOW_MS: positiveInt().min(1000),
  RATE_LIMIT_MAX_REQUESTS: positiveInt().default(100),
  RATE_LIMIT_SENSITIVE_MAX: positiveInt().default(20),
  RATE_LIMIT_COMPLIANCE_MAX: positiveInt().default(5),

  WS_MAX_CONNECTIONS_PER_IP: positiveInt().default(10),
  WS_MAX_CLIENTS: positiveInt().default(1000),
  WS_PING_INTERVAL_MS: positiveInt().min(100).max(300_000).default(30_000),
  WS_IP_LEASE_MS: positiveInt().min(300).max(600_000).default(60_000),

  REQUEST_TIMEOUT_MS: positiveInt().max(300_000).default(30_000),
  SHUTDOWN_GRACE_MS: positiveInt().max(120_000).default(10_000),
  NONCE_TTL_SECONDS: positiveInt().min(330).max(86_400).default(330),

  WEBHOOK_SECRET: Joi.string().min(32).empty(''),

  OTEL_EXPORTER_OTLP_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }).empty(''),
  OTEL_SERVICE_NAME: Joi.string().pattern(/^[A-Za-z0-9._-]{1,64}$/, 'service name').empty(''),
})
  .unknown(true)
  .prefs({ convert: true, abortEarly: false, errors: { wrap: { label: false } } });
