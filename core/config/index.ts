import { envSchema, SETTING_NAMES, type SettingName, type SettingValues } from './settings';
import type { IndexerMode } from './settings/writer';

export * from './settings';

export type TrustProxy = boolean | number | string;

export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  logFormat: 'auto' | 'json' | 'pretty';
  tenantId: string;
  /** Which shape the API serves (D-155). */
  apiVariant: 'v1' | 'legacy';
  chainId: string;
  programId: string;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  /** Where the API reads from while it is fresh enough (D-510, D-511); unset: the primary. */
  databaseRead: { url: string | undefined; maxLagSlots: number };
  redisUrl: string | undefined;
  /** A Redis command without a reply by then fails, so a hung Redis degrades like a down one. */
  redisCommandTimeoutMs: number;
  allowEmbeddedStores: boolean;
  dataDir: string;
  rpcUrl: string;
  rpcWsUrl: string;
  /** The provider's limits the `rpc` source keeps to (D-241): credits/s (0: unpaced), requests in flight, getTransaction calls a batch (1: none). */
  rpcLimits: { requestsPerSecond: number; concurrency: number; batchSize: number };
  publicHosts: string[];
  trustProxy: TrustProxy;
  /** The web origins that may send signed and API-key requests from a browser, or `*` (D-521); public reads answer any origin. */
  corsAllowedOrigins: string[] | '*';
  /** The jurisdiction policy (D-144, D-145); empty lists mean off. */
  /** Wallets allowed on /admin/* (D-146). */
  adminWallets: string[];
  geo: { blockedCountries: string[]; attestationCountries: string[]; countryHeader: string | undefined; paths: string[] };
  apiHost: string;
  apiPort: number;
  indexerPort: number;
  /** The simulated chain's JSON-RPC port (`npm start`, `npm run chain`). */
  chainRpcPort: number;
  /** Where it listens: loopback unless `CHAIN_RPC_HOST` says wider (D-270). */
  chainRpcHost: string;
  /** The simulated chain's RPC as a pool of nodes, each this many slots behind (D-460); empty: one node. */
  chainRpcPoolLags: number[];
  /** Rows the indexer keeps in memory across batches to apply the next batch ahead (0: off). */
  indexerCacheRows: number;
  /** The writer lease's timings (D-300): retry period < renew deadline < duration. */
  writerLease: { durationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  /** `build`: the indexer builds this release's projection schema and switches the API to it (D-411). */
  indexerMode: IndexerMode;
  indexerBuildSwitchSlots: number;
  /** How long the schema switched away from is kept before the live writer drops it (D-412). */
  projectionRetainMs: number;
  rateLimit: {
    windowMs: number;
    publicReadMax: number;
    publicReadWindowMs: number;
    publicMax: number;
    sensitiveMax: number;
    complianceMax: number;
    /** The per-address bucket of a signed tier, in wallets' worth of that tier (D-187). */
    walletsPerIp: number;
  };
  ws: { maxConnectionsPerIp: number; maxClients: number; pingIntervalMs: number; ipLeaseMs: number };
  requestTimeoutMs: number;
  /** Idle keep-alive of the HTTP servers (api, indexer), above the ingress's upstream keep-alive (D-282). */
  httpKeepAliveTimeoutMs: number;
  healthCheckCacheMs: number;
  shutdownGraceMs: number;
  nonceTtlSeconds: number;
  webhookSecret: string | undefined;
  otel: { endpoint: string | undefined; serviceName: string | undefined };
  operator: {
    kubeconfig: string | undefined;
    port: number;
    environment: string;
    defaultsFile: string | undefined;
    namespace: string;
    leaseSeconds: number;
    resyncSeconds: number;
    statusSeconds: number;
    lagThreshold: number;
    statusUrl: string;
  };
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
  const v = value as SettingValues;
  if (!(v.INDEXER_LEASE_RETRY_PERIOD_MS < v.INDEXER_LEASE_RENEW_DEADLINE_MS && v.INDEXER_LEASE_RENEW_DEADLINE_MS < v.INDEXER_LEASE_DURATION_MS)) {
    throw new ConfigError(
      `Invalid configuration: INDEXER_LEASE_RETRY_PERIOD_MS (${v.INDEXER_LEASE_RETRY_PERIOD_MS}) must be less than INDEXER_LEASE_RENEW_DEADLINE_MS (${v.INDEXER_LEASE_RENEW_DEADLINE_MS}), which must be less than INDEXER_LEASE_DURATION_MS (${v.INDEXER_LEASE_DURATION_MS})`,
    );
  }
  const rpcUrl = v.RPC_URL;
  const windowMs = v.RATE_LIMIT_WINDOW_MS;
  return {
    nodeEnv: v.NODE_ENV,
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT,
    tenantId: v.TENANT_ID,
    apiVariant: v.API_VARIANT,
    chainId: v.CHAIN_ID,
    programId: v.PROGRAM_ID,
    databaseUrl: v.DATABASE_URL,
    databasePoolMax: v.DATABASE_POOL_MAX,
    databaseRead: { url: v.DATABASE_READ_URL, maxLagSlots: v.DATABASE_READ_MAX_LAG_SLOTS },
    redisUrl: v.REDIS_URL,
    redisCommandTimeoutMs: v.REDIS_COMMAND_TIMEOUT_MS,
    allowEmbeddedStores: v.ALLOW_EMBEDDED_STORES,
    dataDir: v.DATA_DIR,
    rpcUrl,
    rpcWsUrl: v.RPC_WS_URL ?? rpcUrl.replace(/^http/, 'ws'),
    rpcLimits: { requestsPerSecond: v.RPC_REQUESTS_PER_SECOND, concurrency: v.RPC_CONCURRENCY, batchSize: v.RPC_BATCH_SIZE },
    publicHosts: v.PUBLIC_HOSTS.split(',').map((h) => h.toLowerCase()),
    trustProxy: v.TRUST_PROXY,
    corsAllowedOrigins: v.CORS_ALLOWED_ORIGINS === '*' ? '*' : (v.CORS_ALLOWED_ORIGINS?.split(',').map((o) => o.toLowerCase()) ?? []),
    adminWallets: v.ADMIN_WALLETS?.split(',') ?? [],
    geo: {
      blockedCountries: v.GEO_BLOCKED_COUNTRIES?.split(',') ?? [],
      attestationCountries: v.ATTESTATION_REQUIRED_COUNTRIES?.split(',') ?? [],
      countryHeader: v.GEO_COUNTRY_HEADER?.toLowerCase(),
      paths: v.GEO_POLICY_PATHS.split(','),
    },
    apiHost: v.API_HOST,
    // PORT is the platforms' name for it; API_PORT, when set, wins (D-78). The validated
    // API_PORT always holds a value (its default), so "set" is read from the environment.
    apiPort: env.API_PORT !== undefined && env.API_PORT !== '' ? v.API_PORT : (v.PORT ?? v.API_PORT),
    indexerPort: v.INDEXER_PORT,
    chainRpcPort: v.CHAIN_RPC_PORT,
    chainRpcHost: v.CHAIN_RPC_HOST,
    chainRpcPoolLags: v.CHAIN_RPC_POOL_LAGS?.split(',').map(Number) ?? [],
    indexerCacheRows: v.INDEXER_CACHE_ROWS,
    writerLease: { durationMs: v.INDEXER_LEASE_DURATION_MS, renewDeadlineMs: v.INDEXER_LEASE_RENEW_DEADLINE_MS, retryPeriodMs: v.INDEXER_LEASE_RETRY_PERIOD_MS },
    indexerMode: v.INDEXER_MODE,
    indexerBuildSwitchSlots: v.INDEXER_BUILD_SWITCH_SLOTS,
    projectionRetainMs: v.PROJECTION_RETAIN_HOURS * 3_600_000,
    rateLimit: {
      windowMs,
      publicReadMax: v.PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS,
      // The spec: the public-read window follows RATE_LIMIT_WINDOW_MS when unset.
      publicReadWindowMs: v.PUBLIC_READ_RATE_LIMIT_WINDOW_MS ?? windowMs,
      publicMax: v.RATE_LIMIT_MAX_REQUESTS,
      sensitiveMax: v.RATE_LIMIT_SENSITIVE_MAX,
      complianceMax: v.RATE_LIMIT_COMPLIANCE_MAX,
      walletsPerIp: v.RATE_LIMIT_WALLETS_PER_IP,
    },
    ws: {
      maxConnectionsPerIp: v.WS_MAX_CONNECTIONS_PER_IP,
      maxClients: v.WS_MAX_CLIENTS,
      pingIntervalMs: v.WS_PING_INTERVAL_MS,
      ipLeaseMs: v.WS_IP_LEASE_MS,
    },
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: v.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    healthCheckCacheMs: v.HEALTH_CHECK_CACHE_MS,
    shutdownGraceMs: v.SHUTDOWN_GRACE_MS,
    nonceTtlSeconds: v.NONCE_TTL_SECONDS,
    webhookSecret: v.WEBHOOK_SECRET,
    otel: { endpoint: v.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: v.OTEL_SERVICE_NAME },
    operator: {
      kubeconfig: v.KUBECONFIG,
      port: v.OPERATOR_PORT,
      environment: v.OPERATOR_ENVIRONMENT,
      defaultsFile: v.OPERATOR_DEFAULTS_FILE,
      namespace: v.OPERATOR_NAMESPACE,
      leaseSeconds: v.OPERATOR_LEASE_SECONDS,
      resyncSeconds: v.OPERATOR_RESYNC_SECONDS,
      statusSeconds: v.OPERATOR_STATUS_SECONDS,
      lagThreshold: v.OPERATOR_LAG_THRESHOLD,
      statusUrl: v.OPERATOR_STATUS_URL,
    },
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

/** Names of every setting, in catalog order. */
export function settingNames(): SettingName[] {
  return [...SETTING_NAMES];
}
