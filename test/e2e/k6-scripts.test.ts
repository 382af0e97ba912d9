import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from '../../core/redis/client';
import { SETTINGS } from '../../core/config/settings';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { buildK6 } from '../../loadtest/k6-build';
import { failedChecks, runK6Script, type RunSummary } from '../support/k6/adapter';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, type ApiChild } from '../support/processes';
import { TEST_REDIS_URL, connectRedis, testTenant } from '../support/redis';

/**
 * Every k6 script of loadtest/k6, bundled as for k6 and run once through the k6 test adapter
 * (test support) against real API processes: a failed check fails the test. Timing thresholds
 * are printed, not asserted (they belong to benchmarks); the others (seq gaps, duplicates,
 * updates received, checks) are asserted.
 */
describe('k6 scripts against a live API (k6 test adapter)', () => {
  let out: string;
  let bundles: Record<string, string>;
  let db: TestDatabase;
  let limitsApi: ApiChild;
  let loadApi: ApiChild;
  const tenants = { limits: testTenant(), load: testTenant() };
  const base = (port: number, tenant: string) => ({ BASE_URL: `http://127.0.0.1:${port}`, TENANT: tenant, AUTH_DOMAIN: 'localhost', RUN_ID: `jest-${Date.now()}` });
  let ports: { limits: number; load: number };

  beforeAll(async () => {
    out = mkdtempSync(path.join(os.tmpdir(), 'k6-e2e-'));
    [bundles, db] = await Promise.all([buildK6(out), createTestDatabase()]);
    const common = { DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, PUBLIC_HOSTS: 'localhost' };
    // Limits unlike the defaults: the scripts must read them from the service, not assume them.
    limitsApi = spawnApi({
      ...common,
      TENANT_ID: tenants.limits,
      PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '30',
      RATE_LIMIT_MAX_REQUESTS: '20',
      RATE_LIMIT_SENSITIVE_MAX: '5',
      WS_MAX_CONNECTIONS_PER_IP: '6',
    });
    loadApi = spawnApi({ ...common, TENANT_ID: tenants.load, WS_MAX_CONNECTIONS_PER_IP: '100' });
    ports = { limits: await limitsApi.port, load: await loadApi.port };
  }, 120_000);

  afterAll(async () => {
    for (const api of [limitsApi, loadApi]) {
      if (!api) continue;
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await db?.drop();
    rmSync(out, { recursive: true, force: true });
  }, 60_000);

  const passed = (s: RunSummary) => {
    if (s.errors.length || failedChecks(s).length) process.stdout.write(`${s.text}\n`);
    expect(s.errors).toEqual([]);
    expect(failedChecks(s)).toEqual([]);
    expect(s.thresholds.filter((t) => !t.isTime && !t.ok)).toEqual([]);
  };
  const names = (s: RunSummary) => s.checks.map((c) => c.name);

  // limits-rest counts every request of this address in the window: limits-ws, before it, is
  // given the chain so that it makes none.
  it('limits-ws: connection cap, subscription cap, over-size frame (1009), signed positions', async () => {
    const s = await runK6Script(bundles['limits-ws']!, { env: { ...base(ports.limits, tenants.limits), CHAIN_ID: SETTINGS.CHAIN_ID.default } });
    passed(s);
    expect(names(s)).toEqual(expect.arrayContaining(['connection 7 from one address is refused', '... with close code 1009', 'a replayed nonce: "Nonce already used"']));
  }, 120_000);

  it('limits-rest: every tier refuses right after its configured count; bad signatures get the spec codes', async () => {
    const s = await runK6Script(bundles['limits-rest']!, { env: base(ports.limits, tenants.limits) });
    passed(s);
    expect(names(s)).toEqual(
      expect.arrayContaining([
        'public_read: 30 requests allowed in the window',
        'public: request 21 answers 429 RATE_LIMITED',
        'authenticated: 40 requests allowed in the window',
        'sensitive: X-Ratelimit-Limit is the configured 5',
        'a replayed nonce is refused: 401 UNAUTHORIZED',
        'an expired timestamp is refused: 401 MESSAGE_EXPIRED',
      ]),
    );
  }, 120_000);

  it('load (smoke profile): every route group answers as documented', async () => {
    const s = await runK6Script(bundles.load!, { env: { ...base(ports.load, tenants.load), PROFILE: 'smoke', THINK_SECONDS: '0' } });
    passed(s);
    expect(s.metrics.http_reqs!.values.count).toBeGreaterThanOrEqual(9);
  }, 120_000);

  it('fanout-ws: 10 subscribers receive every published update, in seq order', async () => {
    const redis: Redis = connectRedis();
    const log = createRedisUpdateLog({ redis, keys: createKeys(tenants.load) });
    let publishing = true;
    let published = 0;
    // The indexer's side, in the test: updates on both channels while the script runs.
    const publisher = (async () => {
      while (publishing) {
        published += 1;
        await log.append([
          { channel: 'orderbook:1', slot: published, data: { marketId: '1', bestBid: 4000 + published, bestAsk: 6000 } },
          { channel: 'market:1', slot: published, data: { marketId: '1', field: 'state', value: 2 } },
        ]);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const s = await runK6Script(bundles['fanout-ws']!, {
        env: { ...base(ports.load, tenants.load), SUBSCRIBERS: '10', FANOUT_SECONDS: '3', CHANNELS: 'orderbook:1,market:1' },
        vus: 10,
      });
      passed(s);
      expect(s.metrics.ws_updates_received!.values.count).toBeGreaterThan(10 * 2 * 10);
      expect(s.thresholds.map((t) => `${t.metric} ${t.expression}`)).toEqual(expect.arrayContaining(['ws_seq_gaps count==0', 'ws_seq_duplicates count==0']));
    } finally {
      publishing = false;
      await publisher;
      redis.disconnect();
    }
  }, 120_000);

  it('reports a failed check: signed requests with a domain the service does not accept', async () => {
    const s = await runK6Script(bundles.load!, { env: { ...base(ports.load, tenants.load), PROFILE: 'smoke', THINK_SECONDS: '0', AUTH_DOMAIN: 'elsewhere.example' } });
    expect(s.errors).toEqual([]);
    expect(failedChecks(s)).toEqual(['signed: expected status (✗ 1)']);
  }, 120_000);
});
