import type Redis from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { createKeys } from '../../core/redis/keys';
import { createMemoryNonceStore, createRedisNonceStore } from '../../core/redis/nonce-store';
import { createMemoryBus, createRedisBus, type Bus } from '../../core/redis/bus';
import { createLimiter } from '../../core/redis/rate-limit';
import { createRedis, redisReady } from '../../core/redis/client';
import { connectRedis, testTenant, TEST_REDIS_URL } from '../support/redis';

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

describe('Redis nonce store (two replicas = two separate clients)', () => {
  const clients: Redis[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));

  it('accepts a nonce once across replicas and remembers it for the TTL', async () => {
    const tenant = testTenant();
    const keys = createKeys(tenant);
    const a = connectRedis();
    const b = connectRedis();
    clients.push(a, b);
    const replicaA = createRedisNonceStore({ redis: a, keys, ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 });
    const replicaB = createRedisNonceStore({ redis: b, keys, ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 });

    expect(await replicaA.claim('wallet1', 'n-1', Math.floor(Date.now() / 1000))).toBe(true);
    expect(await replicaB.claim('wallet1', 'n-1', Math.floor(Date.now() / 1000))).toBe(false);
    expect(await replicaA.claim('wallet1', 'n-1', Math.floor(Date.now() / 1000))).toBe(false);
    // Another wallet, or another tenant, has its own nonce space.
    expect(await replicaB.claim('wallet2', 'n-1', Math.floor(Date.now() / 1000))).toBe(true);
    const other = createRedisNonceStore({ redis: b, keys: createKeys(testTenant()), ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 });
    expect(await other.claim('wallet1', 'n-1', Math.floor(Date.now() / 1000))).toBe(true);

    const ttl = await a.pttl(keys.nonce('wallet1', 'n-1'));
    expect(ttl).toBeGreaterThan(320_000);
    expect(ttl).toBeLessThanOrEqual(330_000);
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const keys = createKeys(testTenant());
    const a = connectRedis();
    const b = connectRedis();
    clients.push(a, b);
    const stores = [a, b].map((redis) => createRedisNonceStore({ redis, keys, ttlSeconds: 330, maxPastSeconds: 300, maxFutureSeconds: 30 }));
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => stores[i % 2]!.claim('w', 'race', Math.floor(Date.now() / 1000))));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

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
});

describe('Redis bus', () => {
  const clients: Redis[] = [];
  const buses: Bus[] = [];
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    clients.forEach((c) => c.disconnect());
  });
  const bus = (tenant: string) => {
    const redis = connectRedis();
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
    expect(await publisher.redis.pubsub('NUMSUB', `t:${tenant}:ch:market:42`)).toEqual([`t:${tenant}:ch:market:42`, 1]);
  });

  it('never shows tenant A a message of tenant B', async () => {
    const tenantAId = testTenant();
    const a = bus(tenantAId);
    const aSub = collect(a.bus, 'orderbook:7', 1);
    const aPattern = collect(a.bus, 'orderbook:*', 1);
    await Promise.all([aSub.subscribed, aPattern.subscribed]);
    // Both tenants publish through one connection, so Redis delivers in order: had B's
    // message leaked to A, it would arrive before A's own.
    const shared = connectRedis();
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
    const numsub = async () => ((await redis.pubsub('NUMSUB', channel)) as [string, number])[1];
    const u1 = await b.subscribe('positions:W1', () => {});
    const u2 = await b.subscribe('positions:W1', () => {});
    expect(b.activeSubscriptions()).toBe(1);
    expect(await numsub()).toBe(1);
    await u1();
    expect(await numsub()).toBe(1);
    await u2();
    expect(b.activeSubscriptions()).toBe(0);
    expect(await numsub()).toBe(0);
    await u2(); // idempotent
    expect(b.activeSubscriptions()).toBe(0);
  });

  it('keeps delivering to other handlers when one throws', async () => {
    const errors: unknown[] = [];
    const redis = connectRedis();
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

describe('rate limiter', () => {
  const clients: Redis[] = [];
  afterAll(() => clients.forEach((c) => c.disconnect()));

  it('counts one quota across two replicas through Redis', async () => {
    const keys = createKeys(testTenant());
    const a = createRedis(TEST_REDIS_URL);
    const b = createRedis(TEST_REDIS_URL);
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

  it('falls back to the in-memory insurance limiter while Redis is unreachable', async () => {
    // Nothing listens on port 1: the client never becomes ready.
    const down = createRedis('redis://127.0.0.1:1', { retryStrategy: () => null, lazyConnect: true });
    clients.push(down);
    const limiter = createLimiter({ tier: 'public', points: 3, windowMs: 60_000 }, { redis: down, keys: createKeys(testTenant()) });
    for (let i = 0; i < 3; i++) await expect(limiter.consume('ip')).resolves.toBeInstanceOf(RateLimiterRes);
    await expect(limiter.consume('ip')).rejects.toBeInstanceOf(RateLimiterRes);
  });
});
