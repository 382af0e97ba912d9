import type { Redis } from '../../core/redis/client';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { createKeys } from '../../core/redis/keys';
import { createMemoryNonceStore, createRedisNonceStore } from '../../core/redis/nonce-store';
import { createMemoryBus, createRedisBus, type Bus } from '../../core/redis/bus';
import { coalescedConsume, createLimiter } from '../../core/redis/rate-limit';
import { createRedis, redisReady } from '../../core/redis/client';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { createLogger } from '../../core/telemetry/logger';
import { createRedisLeases, type Lease } from '../../server/ws/ip-leases';
import { waitFor } from '../support/tables';
import { connectRedis, numsub, REDIS_TARGETS, testTenant, type RedisTarget } from '../support/redis';

/** Resolves with the first `n` messages a handler receives. */
function collect(bus: Bus, channel: string, n: number) {
  const got: { message: string; channel: string }[] = [];
  let unsubscribe: () => Promise<void> = async () => {};
  const done = new Promise<typeof got>((resolve) => {
    void bus
      .subscribe(channel, (message, ch) => {
        got.push({ message, channel: ch });
        if (got.length === n) resolve(got);
      })
      .then((u) => {
        unsubscribe = u;
        ready();
      });
  });
  let ready!: () => void;
  const subscribed = new Promise<void>((r) => (ready = r));
  return { done, subscribed, got, unsubscribe: () => unsubscribe() };
}

/** A message's signing time: now, in seconds (the nonce store's window check). */
const now = () => Math.floor(Date.now() / 1000);

// Every Redis behaviour the service relies on, against one Redis and against a real 3-master
// Redis Cluster through ioredis's Cluster client (D-92): keys of one script or transaction
// share a hash slot, and pub/sub reaches subscribers on every node.
describe.each(REDIS_TARGETS)('on $name', (t) => {
  let target: RedisTarget;
  beforeAll(async () => {
    target = await t.start();
  }, 60_000);
  afterAll(async () => {
    await target.close();
  });

  describe('Redis nonce store (two replicas = two separate clients)', () => {
    const clients: Redis[] = [];
    afterAll(() => clients.forEach((c) => c.disconnect()));

    it('accepts a nonce once across replicas and remembers it for the TTL', async () => {
      const tenant = testTenant();
      const keys = createKeys(tenant);
      const a = connectRedis(target.url);
      const b = connectRedis(target.url);
      clients.push(a, b);
      const replicaA = createRedisNonceStore({ redis: a, keys, ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 });
      const replicaB = createRedisNonceStore({ redis: b, keys, ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 });

      expect(await replicaA.claim('wallet1', 'n-1', now())).toBe(true);
      expect(await replicaB.claim('wallet1', 'n-1', now())).toBe(false);
      expect(await replicaA.claim('wallet1', 'n-1', now())).toBe(false);
      // Another wallet, or another tenant, has its own nonce space.
      expect(await replicaB.claim('wallet2', 'n-1', now())).toBe(true);
      const other = createRedisNonceStore({ redis: b, keys: createKeys(testTenant()), ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 });
      expect(await other.claim('wallet1', 'n-1', now())).toBe(true);

      const ttl = await a.pttl(keys.nonce('wallet1', 'n-1'));
      expect(ttl).toBeGreaterThan(320_000);
      expect(ttl).toBeLessThanOrEqual(330_000);
    });

    it('lets exactly one of many concurrent claims win', async () => {
      const keys = createKeys(testTenant());
      const a = connectRedis(target.url);
      const b = connectRedis(target.url);
      clients.push(a, b);
      const stores = [a, b].map((redis) => createRedisNonceStore({ redis, keys, ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 }));
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => stores[i % 2]!.claim('w', 'race', now())));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

  });

  describe('Redis bus', () => {
    const clients: Redis[] = [];
    const buses: Bus[] = [];
    afterAll(async () => {
      await Promise.all(buses.map((b) => b.close()));
      clients.forEach((c) => c.disconnect());
    });
    const bus = (tenant: string) => {
      const redis = connectRedis(target.url);
      clients.push(redis);
      const b = createRedisBus({ redis, keys: createKeys(tenant) });
      buses.push(b);
      return { bus: b, redis };
    };

    it('delivers a message published by one client to a subscriber on another', async () => {
      const tenant = testTenant();
      const publisher = bus(tenant);
      const subscriber = bus(tenant);
      const c = collect(subscriber.bus, 'market:42', 2);
      await c.subscribed;
      await publisher.bus.publish('market:42', '{"field":"state","value":2}');
      await publisher.bus.publish('market:42', '{"field":"state","value":3}');
      expect(await c.done).toEqual([
        { message: '{"field":"state","value":2}', channel: 'market:42' },
        { message: '{"field":"state","value":3}', channel: 'market:42' },
      ]);
      // On the wire the channel carries the tenant prefix.
      expect(await numsub(publisher.redis, `t:${tenant}:ch:market:42`)).toBe(1);
    });

    it('never shows tenant A a message of tenant B', async () => {
      const tenantAId = testTenant();
      const a = bus(tenantAId);
      const aSub = collect(a.bus, 'orderbook:7', 1);
      const aPattern = collect(a.bus, 'orderbook:*', 1);
      await Promise.all([aSub.subscribed, aPattern.subscribed]);
      // Both tenants publish through one connection, so Redis delivers in order: had B's
      // message leaked to A, it would arrive before A's own.
      const shared = connectRedis(target.url);
      clients.push(shared);
      const tenantB = createRedisBus({ redis: shared, keys: createKeys(testTenant()) });
      const tenantA = createRedisBus({ redis: shared, keys: createKeys(tenantAId) });
      buses.push(tenantA, tenantB);
      await tenantB.publish('orderbook:7', 'tenant-b');
      await tenantA.publish('orderbook:7', 'tenant-a');
      expect(await aSub.done).toEqual([{ message: 'tenant-a', channel: 'orderbook:7' }]);
      expect(await aPattern.done).toEqual([{ message: 'tenant-a', channel: 'orderbook:7' }]);
    });

    it('holds one Redis subscription per channel however many local handlers use it', async () => {
      const tenant = testTenant();
      const { bus: b, redis } = bus(tenant);
      const channel = `t:${tenant}:ch:positions:W1`;
          const u1 = await b.subscribe('positions:W1', () => {});
      const u2 = await b.subscribe('positions:W1', () => {});
      expect(b.activeSubscriptions()).toBe(1);
      expect(await numsub(redis, channel)).toBe(1);
      await u1();
      expect(await numsub(redis, channel)).toBe(1);
      await u2();
      expect(b.activeSubscriptions()).toBe(0);
      expect(await numsub(redis, channel)).toBe(0);
      await u2(); // idempotent
      expect(b.activeSubscriptions()).toBe(0);
    });

    it('keeps delivering to other handlers when one throws', async () => {
      const errors: unknown[] = [];
      const redis = connectRedis(target.url);
      clients.push(redis);
      const tenant = testTenant();
      const b = createRedisBus({ redis, keys: createKeys(tenant), onError: (e) => errors.push(e) });
      buses.push(b);
      await b.subscribe('market:1', () => {
        throw new Error('handler bug');
      });
      const c = collect(b, 'market:1', 1);
      await c.subscribed;
      await b.publish('market:1', 'x');
      expect(await c.done).toEqual([{ message: 'x', channel: 'market:1' }]);
      expect(errors).toHaveLength(1);
    });

  });

  describe('update log and /ws leases (scripts over many keys, one slot per script)', () => {
    const clients: Redis[] = [];
    const buses: Bus[] = [];
    afterAll(async () => {
      await Promise.all(buses.map((b) => b.close()));
      clients.forEach((c) => c.disconnect());
    });
    const client = () => {
      const c = connectRedis(target.url);
      clients.push(c);
      return c;
    };

    it('numbers a batch of updates over many channels per channel, publishes them in order and replays them', async () => {
      const keys = createKeys(testTenant());
      const bus = createRedisBus({ redis: client(), keys });
      buses.push(bus);
      // Twenty channels: on a Cluster their keys spread over every node.
      const channels = Array.from({ length: 20 }, (_, i) => `orderbook:${i}`);
      const c = collect(bus, 'orderbook:*', channels.length * 3);
      await c.subscribed;
      const log = createRedisUpdateLog({ redis: client(), keys });
      for (let round = 1; round <= 3; round++) await log.append(channels.map((channel) => ({ channel, slot: round, data: { round } })));
      const got = await c.done;
      for (const channel of channels) {
        const mine = got.filter((m) => m.channel === channel).map((m) => JSON.parse(m.message) as { seq: number; slot: number; data: { round: number } });
        expect(mine).toEqual([1, 2, 3].map((n) => ({ seq: n, slot: n, data: { round: n } })));
      }
      expect(await log.since('orderbook:7', 1)).toEqual({ ok: true, latest: 3, entries: [2, 3].map((n) => ({ seq: n, slot: n, data: { round: n } })) });
      expect(await log.since('orderbook:7', 3)).toEqual({ ok: true, latest: 3, entries: [] });
      expect(await log.since('orderbook:7', 9)).toEqual({ ok: false, latest: 3 });
    });

    it('counts one IP\'s /ws leases across replicas, renews the leases of many IPs, and releases them on close', async () => {
      const keys = createKeys(testTenant());
      const logger = createLogger({ level: 'silent', service: 'test', tenant: 'test' });
      const [a, b] = [client(), client()].map((redis) => createRedisLeases({ redis, keys, max: 3, ttlMs: 1_000, logger }));
      const ips = Array.from({ length: 8 }, (_, i) => `10.0.0.${i}`);
      const held: (Lease | undefined)[] = [];
      for (const ip of ips) for (const replica of [a, b, a]) held.push(await replica!.acquire(ip));
      expect(held.every(Boolean)).toBe(true);
      expect(await b!.acquire(ips[0]!)).toBeUndefined();
      const redis = client();
      const scores = async () => Promise.all(held.map(async (l) => Number(await redis.zscore(keys.wsConnections(l!.ip), l!.member))));
      const first = await scores();
      // Renewal (every ttl/3) pushes every lease's expiry forward, on every node.
      await waitFor('every lease renewed', async () => (await scores()).every((s, i) => s > first[i]!));
      await Promise.all([a!.close(), b!.close()]);
      for (const ip of ips) expect(await redis.zcard(keys.wsConnections(ip))).toBe(0);
    });
  });

  describe('rate limiter', () => {
    const clients: Redis[] = [];
    afterAll(() => clients.forEach((c) => c.disconnect()));

    it('counts one quota across two replicas through Redis', async () => {
      const keys = createKeys(testTenant());
      const a = createRedis(target.url);
      const b = createRedis(target.url);
      clients.push(a, b);
      await Promise.all([redisReady(a), redisReady(b)]);
      const spec = { tier: 'public', points: 5, windowMs: 60_000 };
      const [la, lb] = [createLimiter(spec, { redis: a, keys }), createLimiter(spec, { redis: b, keys })];
      for (let i = 0; i < 5; i++) await (i % 2 ? la : lb).consume('1.2.3.4');
      const refused = await lb.consume('1.2.3.4').then(
        () => undefined,
        (r: unknown) => r,
      );
      expect(refused).toBeInstanceOf(RateLimiterRes);
      expect((refused as RateLimiterRes).remainingPoints).toBe(0);
      expect((refused as RateLimiterRes).msBeforeNext).toBeGreaterThan(55_000);
      // Another key has its own quota; the counter lives under the tenant prefix.
      await expect(la.consume('5.6.7.8')).resolves.toBeInstanceOf(RateLimiterRes);
      expect(await a.exists(`${keys.rateLimitPrefix('public')}:1.2.3.4`)).toBe(1);
    });

    it('keeps the quota exact when each replica coalesces concurrent consumes (D-171)', async () => {
      const keys = createKeys(testTenant());
      const a = createRedis(target.url, { enableAutoPipelining: true });
      const b = createRedis(target.url, { enableAutoPipelining: true });
      clients.push(a, b);
      await Promise.all([redisReady(a), redisReady(b)]);
      const spec = { tier: 'public', points: 12, windowMs: 60_000 };
      const [ca, cb] = [coalescedConsume(createLimiter(spec, { redis: a, keys })), coalescedConsume(createLimiter(spec, { redis: b, keys }))];
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? ca : cb)('9.9.9.9').then(
            (r) => ({ ok: true, r }),
            (r: RateLimiterRes) => ({ ok: false, r }),
          ),
        ),
      );
      // Every request counted once, cluster-wide: consumed points 1..20, the first 12 allowed.
      expect(results.map((x) => x.r.consumedPoints).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(results.filter((x) => x.ok).map((x) => x.r.consumedPoints).sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(results.filter((x) => !x.ok).every((x) => x.r.remainingPoints === 0 && x.r.msBeforeNext > 55_000)).toBe(true);
      expect(await a.get(`${keys.rateLimitPrefix('public')}:9.9.9.9`)).toBe('20');
    });
  });
});

describe('in-memory twins', () => {
  it('has an in-memory twin with the same contract and expiry', async () => {
    let now = 1_000_000;
    const store = createMemoryNonceStore({ ttlSeconds: 330, now: () => now });
    expect(await store.claim('w', 'n', Math.floor(Date.now() / 1000))).toBe(true);
    expect(await store.claim('w', 'n', Math.floor(Date.now() / 1000))).toBe(false);
    now += 329_999;
    expect(await store.claim('w', 'n', Math.floor(Date.now() / 1000))).toBe(false);
    now += 2;
    expect(await store.claim('w', 'n', Math.floor(Date.now() / 1000))).toBe(true);
    await store.close();
  });
  it('has an in-memory twin with the same delivery and pattern rules', async () => {
    const b = createMemoryBus();
    const exact = collect(b, 'market:5', 1);
    const pattern = collect(b, 'market:*', 2);
    await Promise.all([exact.subscribed, pattern.subscribed]);
    await b.publish('market:5', 'one');
    await b.publish('market:6', 'two');
    await b.publish('orderbook:5', 'not-market');
    expect(await exact.done).toEqual([{ message: 'one', channel: 'market:5' }]);
    expect(await pattern.done).toEqual([
      { message: 'one', channel: 'market:5' },
      { message: 'two', channel: 'market:6' },
    ]);
    await b.close();
  });
});

describe('rate limiter without Redis', () => {
  const clients: Redis[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));

  it('falls back to the in-memory insurance limiter while Redis is unreachable', async () => {
    // Nothing listens on port 1: the client never becomes ready.
    const down = createRedis('redis://127.0.0.1:1', { retryStrategy: () => null, lazyConnect: true });
    clients.push(down);
    const limiter = createLimiter({ tier: 'public', points: 3, windowMs: 60_000 }, { redis: down, keys: createKeys(testTenant()) });
    for (let i = 0; i < 3; i++) await expect(limiter.consume('ip')).resolves.toBeInstanceOf(RateLimiterRes);
    await expect(limiter.consume('ip')).rejects.toBeInstanceOf(RateLimiterRes);
  });
});
