import IORedis from 'ioredis';
import type { Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { checkRedisRequirements } from '../../core/redis/requirements';
import { REDIS_ARGS } from '../../cdk8s/lib/dev-stores';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testWallet, walletHeaders } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { rawGet } from '../support/raw-http';
import { startRedisServer } from '../support/redis-server';
import { testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';

/**
 * Issue 23 findings 4 and 5: a Redis the test starts, kills and restarts without persistence,
 * under two API replicas of one tenant (D-102, D-103).
 */
describe('two API replicas across a Redis restart without persistence', () => {
  const suite = apiSuite();
  let server: Awaited<ReturnType<typeof startRedisServer>>;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(() => suite.closeAll());
  afterAll(() => server.close());

  // Reconnecting quickly after the restart: the test waits for it.
  const replica = (tenant: string, env: Record<string, string> = {}) =>
    suite.startProcess({ TENANT_ID: tenant, ...env }, suite.db, { redisUrl: server.url, redisOptions: { retryStrategy: () => 100 } });
  const ready = (r: Redis) => waitFor('redis ready', async () => r.status === 'ready', 20_000);

  it('refuses a nonce used before the restart, on either replica, and accepts messages dated after it', async () => {
    const tenant = testTenant();
    const a = await replica(tenant);
    const b = await replica(tenant);
    const trader = testWallet();
    const target = `/positions?owner=${trader.address}`;
    const headers = walletHeaders(trader, `GET ${target}`);
    const get = (port: number, h: Record<string, string>) => rawGet(port, `/api/v1${target}`, { headers: h });

    expect((await get(a.port, headers)).status).toBe(200);
    const replay = await get(b.port, headers);
    expect([replay.status, replay.json]).toEqual([401, { error: 'Nonce already used', code: 'UNAUTHORIZED' }]);

    await server.restart();
    await Promise.all([ready(a.redis), ready(b.redis)]);
    // Redis remembers nothing now; the replicas know it lost its state.
    expect(await a.redis.exists(createKeys(tenant).nonce(trader.address, JSON.parse(headers['x-wallet-message']!).nonce))).toBe(0);
    for (const port of [b.port, a.port]) {
      const r = await get(port, headers);
      expect([r.status, r.json]).toEqual([401, { error: 'Nonce already used', code: 'UNAUTHORIZED' }]);
    }
    // A new message is accepted once it is dated beyond what a message used before the loss
    // could carry (its use + the 30 s future allowance).
    const marker = (await a.redis.get(createKeys(tenant).nonceEpoch))!;
    const epoch = Number(marker.split(':')[1]);
    expect(epoch).toBeGreaterThan(0);
    const redisNow = async () => Number((await a.redis.time())[0]);
    await waitFor('Redis time past the epoch', async () => (await redisNow()) > epoch, 5_000);
    const fresh = walletHeaders(trader, `GET ${target}`, { timestamp: (await redisNow()) + 30 });
    expect((await get(b.port, fresh)).status).toBe(200);
    expect((await get(a.port, fresh)).status).toBe(401);
  });

  it('counts /ws connections taken while Redis was down once it is back, and refuses new ones over the limit', async () => {
    const tenant = testTenant();
    const env = { WS_MAX_CONNECTIONS_PER_IP: '3' };
    const a = await replica(tenant, env);
    const b = await replica(tenant, env);
    const key = createKeys(tenant).wsConnections('127.0.0.8');
    const open = (port: number, ip = '127.0.0.8') => WsClient.open(`ws://127.0.0.1:${port}/ws`, { localAddress: ip });
    const held: WsClient[] = [];

    await server.kill();
    await waitFor('clients see Redis down', async () => a.redis.status !== 'ready' && b.redis.status !== 'ready', 10_000);
    // Each replica counts its own connections meanwhile: 3 each, 6 in all.
    for (const port of [a.port, b.port]) for (let i = 0; i < 3; i++) held.push(await open(port));
    await expect(open(a.port)).rejects.toThrow('upgrade refused: 429');

    await server.restart();
    await Promise.all([ready(a.redis), ready(b.redis)]);
    const probe = new IORedis(server.url, { maxRetriesPerRequest: 1 });
    try {
      await waitFor('fallback leases registered', async () => (await probe.zcard(key)) === 6, 20_000);
      // Over the limit across the replicas: new connections from that address are refused on both.
      await expect(open(a.port)).rejects.toThrow('upgrade refused: 429');
      await expect(open(b.port)).rejects.toThrow('upgrade refused: 429');
      // Another address is unaffected.
      const other = await open(b.port, '127.0.0.9');
      await other.close();
      // Once enough close, the address may connect again.
      for (const c of held.splice(0, 4)) await c.close();
      await waitFor('released leases', async () => (await probe.zcard(key)) === 2, 20_000);
      held.push(await open(a.port));
      expect(await probe.zcard(key)).toBe(3);
      await expect(open(b.port)).rejects.toThrow('upgrade refused: 429');
    } finally {
      await Promise.all(held.map((c) => c.close()));
      probe.disconnect();
    }
  });

  it('checks the Redis it is given: eviction policy and persistence (D-104)', async () => {
    const r = new IORedis(server.url, { maxRetriesPerRequest: 1 });
    try {
      // As the test started it: no persistence at all, never evicting. A restart loses everything, which D-102 detects.
      expect(await checkRedisRequirements(r)).toEqual({ checked: true, problems: [] });
      await r.config('SET', 'maxmemory-policy', 'volatile-lru');
      await r.config('SET', 'save', '60 1');
      const bad = await checkRedisRequirements(r);
      expect(bad.problems).toHaveLength(2);
      expect(bad.problems[0]).toMatch(/^maxmemory-policy is volatile-lru: set noeviction/);
      expect(bad.problems[1]).toMatch(/^RDB snapshots \(save "60 1"\)/);
      await r.config('SET', 'maxmemory-policy', 'noeviction');
      await r.config('SET', 'appendonly', 'yes');
      expect((await checkRedisRequirements(r)).problems).toEqual([expect.stringMatching(/^appendonly yes with appendfsync everysec/)]);
      await r.config('SET', 'appendfsync', 'always');
      expect(await checkRedisRequirements(r)).toEqual({ checked: true, problems: [] });
      // A Redis that refuses CONFIG (managed services often do) cannot be checked, and says so.
      await r.call('ACL', 'SETUSER', 'limited', 'on', '>pw', '~*', '+@all', '-config');
      const limited = new IORedis(`redis://limited:pw@127.0.0.1:${server.port}`, { maxRetriesPerRequest: 1 });
      expect(await checkRedisRequirements(limited)).toEqual({ checked: false, problems: [] });
      limited.disconnect();
      // The deployment kit's dev Redis, run as the kit runs it (its data folder aside), meets them.
      // Its --dir, given after the helper's own, is a scratch folder too.
      const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-redis-'));
      const kit = await startRedisServer({ args: REDIS_ARGS.map((a, i) => (REDIS_ARGS[i - 1] === '--dir' ? dir : a)) });
      const k = new IORedis(kit.url, { maxRetriesPerRequest: 1 });
      try {
        expect(await checkRedisRequirements(k)).toEqual({ checked: true, problems: [] });
      } finally {
        k.disconnect();
        await kit.close();
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await r.config('SET', 'appendonly', 'no').catch(() => undefined);
      await r.config('SET', 'save', '').catch(() => undefined);
      r.disconnect();
    }
  });
});
