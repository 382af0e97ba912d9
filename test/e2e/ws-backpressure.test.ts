import type { Redis } from '../../core/redis/client';
import { WS_LIMITS } from '../../core/limits';
import { runBackpressure } from '../../loadtest/bench/ws-backpressure';
import { BACKPRESSURE_REASON, CLOSE } from '../../server/ws/protocol';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, type ApiChild } from '../support/processes';
import { TEST_REDIS_URL, connectRedis, testTenant } from '../support/redis';

/**
 * Spec 8 backpressure against a real API process: clients that stop reading at the socket
 * level are closed with the policy code after the documented consecutive skips, while every
 * reading client receives every update in seq order. The scale is modest for CI; `npm run bench
 * -- ws-backpressure` runs 1,000 subscribers and reports latency and RSS.
 */
describe('/ws backpressure with clients stalled at the socket level (real API process)', () => {
  let db: TestDatabase;
  let api: ApiChild;
  let redis: Redis;
  const tenant = testTenant();

  beforeAll(async () => {
    db = await createTestDatabase();
    api = spawnApi({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: tenant, WS_MAX_CONNECTIONS_PER_IP: '200' });
    redis = connectRedis();
    await api.port;
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    if (api) {
      api.child.kill('SIGTERM');
      await api.exited;
    }
    await db?.drop();
  }, 60_000);

  it('closes each stalled client with 1008 after 50 consecutive skips; the 95 reading clients get every update in order', async () => {
    const port = await api.port;
    const r = await runBackpressure({
      wsUrl: `ws://127.0.0.1:${port}/ws`,
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
      redis,
      tenant,
      healthy: 95,
      stalled: 5,
      rate: 100,
      seconds: 3,
      stallTimeoutMs: 90_000,
    });
    expect(r.stalled).toEqual(Array.from({ length: 5 }, () => ({ code: CLOSE.policy, reason: BACKPRESSURE_REASON })));
    expect(r.backpressureCloses).toBe(5);
    // Each close follows maxSkips consecutive skips (skips before a buffer drained may add more).
    expect(r.skipped).toBeGreaterThanOrEqual(5 * WS_LIMITS.maxSkips);
    expect(r.published).toBeGreaterThanOrEqual(300);
    const unhealthy = r.healthy.filter((h) => h.missing !== 0 || h.disordered !== 0 || h.received !== r.published || h.closed !== undefined);
    expect(unhealthy).toEqual([]);
    expect(r.healthy).toHaveLength(95);
  }, 150_000);
});
