import { envSchema } from './schema';

export type TrustProxy = boolean | number | string;

export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  tenantId: string;
  chainId: string;
  programId: string;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  redisUrl: string | undefined;
  /** A Redis command without a reply by then fails, so a hung Redis degrades like a down one. */
  redisCommandTimeoutMs: number;
  allowEmbeddedStores: boolean;
  dataDir: string;
  rpcUrl: string;
  rpcWsUrl: string;
  publicHosts: string[];
  trustProxy: TrustProxy;
  apiHost: string;
  apiPort: number;
  indexerPort: number;
  /** Rows the indexer keeps in memory across batches to apply the next batch ahead (0: off). */
  indexerCacheRows: number;
  rateLimit: {
    windowMs: number;
    publicReadMax: number;
    publicReadWindowMs: number;
    publicMax: number;
    sensitiveMax: number;
    complianceMax: number;
  };
  ws: { maxConnectionsPerIp: number; maxClients: number; pingIntervalMs: number; ipLeaseMs: number };
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  nonceTtlSeconds: number;
  webhookSecret: string | undefined;
  otel: { endpoint: string | undefined; serviceName: string | undefined };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates the environment; throws one ConfigError whose message is a single line. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = envSchema.validate(env);
  if (error) {
    // Joi's messages already start with the variable name (labels are not wrapped).
    throw new ConfigError(`Invalid configuration: ${error.details.map((d) => d.message).join('; ')}`);
  }
  const v = value as Record<string, unknown>;
  const num = (k: string) => v[k] as number;
  const str = (k: string) => v[k] as string;
  const opt = (k: string) => v[k] as string | undefined;
  const rpcUrl = str('RPC_URL');
  const windowMs = num('RATE_LIMIT_WINDOW_MS');
  return {
    nodeEnv: v.NODE_ENV as Config['nodeEnv'],
    logLevel: v.LOG_LEVEL as Config['logLevel'],
    tenantId: str('TENANT_ID'),
    chainId: str('CHAIN_ID'),
    programId: str('PROGRAM_ID'),
    databaseUrl: opt('DATABASE_URL'),
    databasePoolMax: num('DATABASE_POOL_MAX'),
    redisUrl: opt('REDIS_URL'),
    redisCommandTimeoutMs: num('REDIS_COMMAND_TIMEOUT_MS'),
    allowEmbeddedStores: v.ALLOW_EMBEDDED_STORES as boolean,
    dataDir: str('DATA_DIR'),
    rpcUrl,
    rpcWsUrl: opt('RPC_WS_URL') ?? rpcUrl.replace(/^http/, 'ws'),
    publicHosts: str('PUBLIC_HOSTS').split(',').map((h) => h.toLowerCase()),
    trustProxy: v.TRUST_PROXY as TrustProxy,
    apiHost: str('API_HOST'),
    apiPort: num('API_PORT'),
    indexerPort: num('INDEXER_PORT'),
    indexerCacheRows: num('INDEXER_CACHE_ROWS'),
    rateLimit: {
      windowMs,
      publicReadMax: num('PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS'),
      // The spec: the public-read window follows RATE_LIMIT_WINDOW_MS when unset.
      publicReadWindowMs: (v.PUBLIC_READ_RATE_LIMIT_WINDOW_MS as number | undefined) ?? windowMs,
      publicMax: num('RATE_LIMIT_MAX_REQUESTS'),
      sensitiveMax: num('RATE_LIMIT_SENSITIVE_MAX'),
      complianceMax: num('RATE_LIMIT_COMPLIANCE_MAX'),
    },
    ws: {
      maxConnectionsPerIp: num('WS_MAX_CONNECTIONS_PER_IP'),
      maxClients: num('WS_MAX_CLIENTS'),
      pingIntervalMs: num('WS_PING_INTERVAL_MS'),
      ipLeaseMs: num('WS_IP_LEASE_MS'),
    },
    requestTimeoutMs: num('REQUEST_TIMEOUT_MS'),
    shutdownGraceMs: num('SHUTDOWN_GRACE_MS'),
    nonceTtlSeconds: num('NONCE_TTL_SECONDS'),
    webhookSecret: opt('WEBHOOK_SECRET'),
    otel: { endpoint: opt('OTEL_EXPORTER_OTLP_ENDPOINT'), serviceName: opt('OTEL_SERVICE_NAME') },
  };
}

/** For process entry points: a bad setting prints one line to stderr and exits 1. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Names of every setting, for the documentation consistency test. */
export function settingNames(): string[] {
  const described = envSchema.describe() as { keys?: Record<string, unknown> };
  return Object.keys(described.keys ?? {});
}
