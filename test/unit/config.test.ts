import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, settingNames } from '../../core/config';

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
  it('applies the spec defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.rateLimit).toEqual({
      windowMs: 60_000,
      publicReadMax: 300,
      publicReadWindowMs: 60_000,
      publicMax: 100,
      sensitiveMax: 20,
      complianceMax: 5,
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
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL must be a valid uri'],
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
    const documented = new Set([...doc.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]));
    expect([...documented].sort()).toEqual(settingNames().sort());
    const defaults = loadConfig({});
    // Spot-check that the documented defaults are the real ones.
    expect(doc).toMatch(new RegExp(`\\| \`RATE_LIMIT_WINDOW_MS\` \\| \`${defaults.rateLimit.windowMs}\``));
    expect(doc).toMatch(new RegExp(`\\| \`WS_MAX_CLIENTS\` \\| \`${defaults.ws.maxClients}\``));
    expect(doc).toMatch(new RegExp(`\\| \`PROGRAM_ID\` \\| \`${defaults.programId}\``));
  });
});
