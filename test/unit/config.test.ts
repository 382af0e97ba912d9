import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, envSchema, loadConfig, settingNames, settingSpec, type SettingName } from '../../core/config';

const ROOT = path.resolve(__dirname, '../..');

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be rejected`);
}

describe('config', () => {
  it("takes the writer lease's timings, and refuses them out of order, naming the three", () => {
    expect(loadConfig({}).writerLease).toEqual({ durationMs: 10_000, renewDeadlineMs: 7_000, retryPeriodMs: 2_000 });
    expect(loadConfig({ INDEXER_LEASE_DURATION_MS: '6000', INDEXER_LEASE_RENEW_DEADLINE_MS: '4000', INDEXER_LEASE_RETRY_PERIOD_MS: '1000' }).writerLease).toEqual({
      durationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000,
    });
    for (const env of [{ INDEXER_LEASE_RENEW_DEADLINE_MS: '15000' }, { INDEXER_LEASE_RETRY_PERIOD_MS: '10000' }] as Record<string, string>[]) {
      expect(errorOf(env)).toMatch(/INDEXER_LEASE_RETRY_PERIOD_MS \(\d+\) must be less than INDEXER_LEASE_RENEW_DEADLINE_MS \(\d+\), which must be less than INDEXER_LEASE_DURATION_MS \(10000\)/);
    }
  });

  it('applies the spec defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.rateLimit).toEqual({
      windowMs: 60_000,
      publicReadMax: 300,
      publicReadWindowMs: 60_000,
      publicMax: 100,
      sensitiveMax: 20,
      complianceMax: 5,
      walletsPerIp: 5,
    });
    expect(c.ws).toEqual({ maxConnectionsPerIp: 10, maxClients: 1000, pingIntervalMs: 30_000, ipLeaseMs: 60_000 });
    expect(c.requestTimeoutMs).toBe(30_000);
    expect(c.shutdownGraceMs).toBe(10_000);
    expect(c.nonceTtlSeconds).toBe(330);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.redisUrl).toBeUndefined();
    expect(c.trustProxy).toBe(false);
    expect(c.rpcWsUrl).toBe('ws://127.0.0.1:8899');
  });

  it('lets the public-read window follow RATE_LIMIT_WINDOW_MS unless it is set itself', () => {
    expect(loadConfig({ RATE_LIMIT_WINDOW_MS: '30000' }).rateLimit.publicReadWindowMs).toBe(30_000);
    expect(
      loadConfig({ RATE_LIMIT_WINDOW_MS: '30000', PUBLIC_READ_RATE_LIMIT_WINDOW_MS: '5000' }).rateLimit.publicReadWindowMs,
    ).toBe(5_000);
  });

  it('takes PORT as an alias of API_PORT, API_PORT winning when both are set', () => {
    expect(loadConfig({}).apiPort).toBe(3000);
    expect(loadConfig({ PORT: '8080' }).apiPort).toBe(8080);
    expect(loadConfig({ PORT: '8080', API_PORT: '3005' }).apiPort).toBe(3005);
    // API_PORT set to its default still wins: "set" is whether the variable is there.
    expect(loadConfig({ PORT: '8080', API_PORT: '3000' }).apiPort).toBe(3000);
    expect(loadConfig({ PORT: '8080', API_PORT: '' }).apiPort).toBe(8080);
    expect(loadConfig({ PORT: '0' }).apiPort).toBe(0);
    expect(loadConfig({ PORT: '' }).apiPort).toBe(3000);
    expect(errorOf({ PORT: 'http' })).toContain('PORT must be a number');
    expect(errorOf({ PORT: '70000', API_PORT: '3000' })).toContain('PORT must be less than or equal to 65535');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ REDIS_URL: '', API_PORT: '' }).apiPort).toBe(3000);
  });

  it('parses trust proxy as a boolean, a hop count or an address list', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback,10.0.0.0/8' }).trustProxy).toBe('loopback,10.0.0.0/8');
  });

  it.each([
    [{ RATE_LIMIT_WINDOW_MS: 'abc' }, 'RATE_LIMIT_WINDOW_MS must be a number'],
    [{ RATE_LIMIT_WINDOW_MS: '1.5' }, 'RATE_LIMIT_WINDOW_MS must be an integer'],
    [{ RATE_LIMIT_WINDOW_MS: '500' }, 'RATE_LIMIT_WINDOW_MS must be greater than or equal to 1000'],
    [{ WS_MAX_CLIENTS: '0' }, 'WS_MAX_CLIENTS must be greater than or equal to 1'],
    [{ RATE_LIMIT_SENSITIVE_MAX: '-3' }, 'RATE_LIMIT_SENSITIVE_MAX must be greater than or equal to 1'],
    [{ API_PORT: '70000' }, 'API_PORT must be less than or equal to 65535'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL must be one of'],
    [{ DATABASE_URL: 'mysql://db/x' }, 'DATABASE_URL must be a valid uri with a scheme matching the postgres|postgresql pattern'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL must be a redis://, rediss://, redis+cluster://, rediss+cluster:// URI'],
    [{ REDIS_URL: 'redis+cluster://a:1,b' }, 'REDIS_URL must list cluster nodes as host:port,host:port'],
    [{ REDIS_URL: 'redis+cluster://a:1,b:99999' }, 'REDIS_URL must list cluster nodes as host:port,host:port'],
    [{ TENANT_ID: 'Bad_Tenant' }, 'TENANT_ID with value Bad_Tenant fails to match the lowercase DNS label'],
    [{ PROGRAM_ID: '0OIl' }, 'PROGRAM_ID with value 0OIl fails to match the base58 address pattern'],
    [{ WEBHOOK_SECRET: 'short' }, 'WEBHOOK_SECRET length must be at least 32 characters long'],
    [{ NONCE_TTL_SECONDS: '60' }, 'NONCE_TTL_SECONDS must be greater than or equal to 330'],
    [{ PUBLIC_HOSTS: 'a.example,b example' }, 'PUBLIC_HOSTS with value'],
  ])('rejects %j', (env, message) => {
    const msg = errorOf(env);
    expect(msg).toContain(message);
    expect(msg).not.toContain('\n');
  });

  it('reports every bad variable on one line', () => {
    const msg = errorOf({ API_PORT: 'x', WS_MAX_CLIENTS: '0' });
    expect(msg).toMatch(/^Invalid configuration: .*API_PORT.*; .*WS_MAX_CLIENTS/);
    expect(msg.split('\n')).toHaveLength(1);
  });

  it('never echoes a secret value in an error', () => {
    const secret = 'p@ssw0rd-do-not-print';
    expect(errorOf({ DATABASE_URL: `mysql://u:${secret}@db/x` })).not.toContain(secret);
    expect(errorOf({ WEBHOOK_SECRET: 'tooshortsecret' })).not.toContain('tooshortsecret');
  });

  it('stops a process with exactly one line on stderr and exit code 1', () => {
    const res = spawnSync(
      process.execPath,
      ['-r', 'tsx/cjs', '-e', "require('./core/config').loadConfigOrExit(); console.log('started')"],
      { cwd: ROOT, env: { PATH: process.env.PATH, WS_MAX_CONNECTIONS_PER_IP: 'ten' }, encoding: 'utf8' },
    );
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim().split('\n')).toEqual(['Invalid configuration: WS_MAX_CONNECTIONS_PER_IP must be a number']);
    // and a good environment starts
    const ok = execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', "require('./core/config').loadConfigOrExit(); console.log('started')"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    });
    expect(ok.trim()).toBe('started');
  });

  it('documents every setting, with its default, in docs/configuration.md', () => {
    const doc = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
    const documented = [...doc.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1], m[2]!.trim()] as const);
    expect(documented.map(([n]) => n)).toEqual(settingNames());
    const defaults = loadConfig({});
    expect(documented).toContainEqual(['RATE_LIMIT_WINDOW_MS', `\`${defaults.rateLimit.windowMs}\``]);
    expect(documented).toContainEqual(['PROGRAM_ID', `\`${defaults.programId}\``]);
  });

  /** A valid value other than the default, for each setting (the catalog's JSON Schema tells the kind). */
  function otherValue(name: SettingName): string {
    const s = settingSpec(name);
    const examples: Partial<Record<SettingName, string>> = {
      TENANT_ID: 'alpha',
      CHAIN_ID: 'solana-devnet',
      PROGRAM_ID: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
      DATABASE_URL: 'postgres://u@db:5432/x',
      DATABASE_READ_URL: 'postgres://u:p@db-ro:5432/market',
      REDIS_URL: 'redis://cache:6379',
      DATA_DIR: '/var/lib/market',
      RPC_URL: 'https://rpc.example',
      RPC_WS_URL: 'wss://rpc.example',
      PUBLIC_HOSTS: 'a.example,b.example',
      CORS_ALLOWED_ORIGINS: 'https://app.example,http://localhost:5173',
      GEO_BLOCKED_COUNTRIES: 'KP,IR',
      ADMIN_WALLETS: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
      ATTESTATION_REQUIRED_COUNTRIES: 'US',
      GEO_COUNTRY_HEADER: 'CF-IPCountry',
      GEO_POLICY_PATHS: '/tx/*,/attestations',
      TRUST_PROXY: '2',
      API_HOST: '127.0.0.1',
      CHAIN_RPC_HOST: '0.0.0.0',
      CHAIN_RPC_POOL_LAGS: '0,2,5',
      WEBHOOK_SECRET: 'x'.repeat(40),
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'svc',
      OTEL_TRACES_SAMPLER: 'always_off',
      OTEL_TRACES_SAMPLER_ARG: '0.5',
      KUBECONFIG: '/etc/kube/config',
      OPERATOR_ENVIRONMENT: 'prod',
      OPERATOR_DEFAULTS_FILE: '/etc/market-indexer/defaults.yaml',
      OPERATOR_NAMESPACE: 'ops',
      OPERATOR_STATUS_URL: 'http://127.0.0.1:9/{tenant}/status',
    };
    if (examples[name]) return examples[name]!;
    const j = s.jsonSchema as { type?: string; enum?: string[]; minimum?: number; maximum?: number };
    if (j.enum) return j.enum.find((v) => v !== s.default)!;
    if (j.type === 'boolean') return String(!s.default);
    if (j.type === 'integer') {
      const v = (typeof s.default === 'number' ? s.default : (j.minimum ?? 0)) + 1;
      return String(j.maximum !== undefined && v > j.maximum ? j.maximum - 1 : v);
    }
    throw new Error(`no example value for ${name}`);
  }

  // The SDK reads these itself; the catalog only validates them.
  const READ_OUTSIDE_CONFIG: SettingName[] = ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'];

  it.each(settingNames().filter((n) => !READ_OUTSIDE_CONFIG.includes(n)))('maps %s into Config: another valid value changes it', (name) => {
    const value = otherValue(name);
    expect(envSchema.validate({ [name]: value }).error).toBeUndefined();
    expect(JSON.stringify(loadConfig({ [name]: value }))).not.toBe(JSON.stringify(loadConfig({})));
  });

  it('validates the settings the OpenTelemetry SDK reads itself', () => {
    expect(errorOf({ OTEL_TRACES_SAMPLER: 'sometimes' })).toContain('OTEL_TRACES_SAMPLER must be one of');
    expect(errorOf({ OTEL_TRACES_SAMPLER_ARG: '2' })).toContain('OTEL_TRACES_SAMPLER_ARG must be less than or equal to 1');
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })).not.toThrow();
  });
});
