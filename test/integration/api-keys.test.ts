import { randomBytes } from 'node:crypto';
import express from 'express';
import { ApiKeyError, createApiKeyStore, hashApiKey, type ApiKeyStore } from '../../core/api-keys';
import { createDatabase, type Database } from '../../core/db';
import { API_PLANS, planOf } from '../../core/plans';
import { redisReady, type Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { ApiError } from '../../server/http/errors';
import { createPlanLimits } from '../../server/limits/plan-limits';
import { runKeysCli } from '../../scripts/keys-cli';
import { serve } from '../support/api';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';

let tdb: TestDatabase;
let database: Database;
let store: ApiKeyStore;

beforeAll(async () => {
  tdb = await createTestDatabase();
  database = createDatabase({ url: tdb.url, poolMax: 4 });
  store = createApiKeyStore(database.db);
});
afterAll(async () => {
  await database.close();
  await tdb.drop();
});

describe('API key store (real PostgreSQL)', () => {
  it('creates a key on a plan, stores only its hash, and finds it for its own tenant only', async () => {
    const { key, info } = await store.create({ tenant: 'acme', plan: 'basic', label: 'mobile app' });
    expect(key).toMatch(/^mik_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(info).toMatchObject({ tenant: 'acme', plan: 'basic', label: 'mobile app', revokedAt: null });
    const row = await database.db.one('SELECT * FROM api_keys WHERE key_id = $1', [info.keyId]);
    expect(row.key_hash).toBe(hashApiKey(key));
    expect(JSON.stringify(row)).not.toContain(key.slice(18));
    expect(await store.lookup('acme', key)).toEqual({ keyId: info.keyId, plan: 'basic' });
    expect(await store.lookup('other', key)).toBeNull();
    expect(await store.lookup('acme', `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(await store.lookup('acme', 'not a key')).toBeNull();
  });

  it('revokes a key once, and a revoked key is not found', async () => {
    const { key, info } = await store.create({ tenant: 'acme', plan: 'pro' });
    expect(await store.revoke({ tenant: 'other', keyId: info.keyId })).toBe(false);
    expect(await store.revoke({ tenant: 'acme', keyId: info.keyId })).toBe(true);
    expect(await store.revoke({ tenant: 'acme', keyId: info.keyId })).toBe(false);
    expect(await store.lookup('acme', key)).toBeNull();
    expect((await store.list('acme')).find((k) => k.keyId === info.keyId)?.revokedAt).toBeInstanceOf(Date);
  });

  it('refuses a plan that is not declared', async () => {
    await expect(store.create({ tenant: 'acme', plan: 'enterprise' })).rejects.toThrow(new ApiKeyError('unknown plan "enterprise"; plans: free, basic, pro'));
  });
});

describe('npm run keys (scripts/keys-cli.ts)', () => {
  const run = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await runKeysCli(argv, { store: () => store, out: (s) => void (out += s), err: (s) => void (err += s) });
    return { code, out, err };
  };

  it('create prints the key once; list and revoke never show it', async () => {
    const created = await run('create', '--tenant', 'cli-t', '--plan', 'pro', '--label', 'desk');
    expect(created.code).toBe(0);
    const key = /^(mik_\S+)$/m.exec(created.out)![1]!;
    const keyId = key.slice(4, 16);
    expect(created.out).toContain(`created key ${keyId} on plan pro for tenant cli-t (desk)`);
    expect(await store.lookup('cli-t', key)).toEqual({ keyId, plan: 'pro' });
    const listed = await run('list', '--tenant', 'cli-t');
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(new RegExp(`^${keyId}  pro    created \\S+  active  desk$`, 'm'));
    expect(listed.out).not.toContain(key.slice(17));
    const revoked = await run('revoke', '--tenant', 'cli-t', '--id', keyId);
    expect(revoked).toEqual({ code: 0, out: `revoked key ${keyId} of tenant cli-t\n`, err: '' });
    expect(await store.lookup('cli-t', key)).toBeNull();
    expect((await run('revoke', '--tenant', 'cli-t', '--id', keyId)).code).toBe(1);
  });

  it.each([
    [['create', '--plan', 'pro'], '--tenant is required'],
    [['create', '--tenant', 'Bad_Tenant', '--plan', 'pro'], 'is not a tenant id'],
    [['create', '--tenant', 't'], '--plan is required'],
    [['create', '--tenant', 't', '--plan', 'gold'], 'unknown plan "gold"'],
    [['revoke', '--tenant', 't'], '--id is required'],
    [['rotate', '--tenant', 't'], 'unknown command rotate'],
    [['list', '--tenant', 't', '--verbose'], 'unknown option --verbose'],
  ])('%j is refused with usage, exit code 2', async (argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.err).toContain('usage: npm run keys');
    expect(r.out).toBe('');
  });
});

describe('plan limits (real Redis, cluster-wide)', () => {
  let redis: Redis;
  const tenant = testTenant();

  beforeAll(async () => {
    redis = connectRedis();
    // Not ready, the limiter answers from its in-memory insurance: per process, not shared.
    await redisReady(redis, 5_000);
  });
  afterAll(async () => {
    redis.disconnect();
  });

  /** A replica: the plan middleware in front of a handler, errors as `{ code }` with their status. */
  async function replica(o: { cacheMs?: number; cacheEntries?: number; keys?: ApiKeyStore } = {}) {
    const { logger, metrics } = testCommon();
    const limits = createPlanLimits({ tenant, keys: o.keys ?? store, store: { redis, keys: createKeys(tenant) }, logger, metrics, cacheMs: o.cacheMs ?? 0, cacheEntries: o.cacheEntries });
    const app = express();
    app.set('trust proxy', true);
    app.get('/x', limits.middleware(), (req, res) => void res.json({ plan: req.planCaller!.plan, subject: req.planCaller!.subject }));
    app.use((err: ApiError, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(err.status).json({ code: err.code }));
    const refusals = async () =>
      Object.fromEntries((await metrics.planLimitRefusals.get()).values.filter((v) => v.value > 0).map((v) => [`${v.labels.plan}/${v.labels.limit}`, v.value]));
    return { ...(await serve(app)), refusals };
  }

  it('declares the appendix tiers', () => {
    expect(API_PLANS.map((p) => [p.name, p.requestsPerMinute, p.wsConnections])).toEqual([
      ['free', 60, 2],
      ['basic', 300, 5],
      ['pro', 1000, 20],
    ]);
  });

  it('without a key: the free plan by client IP, shared by every replica, then 429 with the headers', async () => {
    const [a, b] = [await replica(), await replica()];
    try {
      const ip = { 'x-forwarded-for': '203.0.113.7' };
      const free = planOf('free').requestsPerMinute;
      for (let i = 0; i < free; i++) {
        const res = await fetch(`${i % 2 ? a.url : b.url}/x`, { headers: ip });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('60');
        expect(res.headers.get('x-ratelimit-remaining')).toBe(String(free - 1 - i));
        if (i === 0) expect(await res.json()).toEqual({ plan: 'free', subject: 'ip:203.0.113.7' });
      }
      expect([await a.refusals(), await b.refusals()]).toEqual([{}, {}]);
      const over = await fetch(`${a.url}/x`, { headers: ip });
      expect(over.status).toBe(429);
      // Counted by the replica that refused it, under the plan that was spent (D-161).
      expect([await a.refusals(), await b.refusals()]).toEqual([{ 'free/requests': 1 }, {}]);
      expect(await over.json()).toEqual({ code: 'RATE_LIMITED' });
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another IP has its own budget.
      expect((await fetch(`${b.url}/x`, { headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("with a key: its plan's limit, counted per key whatever the IP", async () => {
    const a = await replica();
    try {
      const { key, info } = await store.create({ tenant, plan: 'pro' });
      const res = await fetch(`${a.url}/x`, { headers: { 'x-api-key': key, 'x-forwarded-for': '203.0.113.20' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ plan: 'pro', subject: `key:${info.keyId}` });
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
      const other = await fetch(`${a.url}/x`, { headers: { 'x-api-key': key, 'x-forwarded-for': '203.0.113.21' } });
      expect(other.headers.get('x-ratelimit-remaining')).toBe('998');
    } finally {
      await a.close();
    }
  });

  it('an unknown or revoked key is a 401, not a downgrade to free', async () => {
    const a = await replica();
    try {
      const { key, info } = await store.create({ tenant, plan: 'basic' });
      expect((await fetch(`${a.url}/x`, { headers: { 'x-api-key': key } })).status).toBe(200);
      await store.revoke({ tenant, keyId: info.keyId });
      const revoked = await fetch(`${a.url}/x`, { headers: { 'x-api-key': key, 'x-forwarded-for': '203.0.113.30' } });
      expect(revoked.status).toBe(401);
      expect(await revoked.json()).toEqual({ code: 'UNAUTHORIZED' });
      const unknown = await fetch(`${a.url}/x`, { headers: { 'x-api-key': 'mik_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'x-forwarded-for': '203.0.113.30' } });
      expect(unknown.status).toBe(401);
      // The bad keys spent the IP's keyless budget.
      expect(unknown.headers.get('x-ratelimit-remaining')).toBe('58');
      // Another tenant's key is unknown here.
      const foreign = await store.create({ tenant: 'someone-else', plan: 'pro' });
      expect((await fetch(`${a.url}/x`, { headers: { 'x-api-key': foreign.key } })).status).toBe(401);
    } finally {
      await a.close();
    }
  });

  /** The key store, counting the lookups that reach PostgreSQL. */
  const counted = () => {
    const c: { lookups: number; store: ApiKeyStore } = { lookups: 0, store };
    c.store = { ...store, lookup: (t, k) => (c.lookups++, store.lookup(t, k)) };
    return c;
  };
  const randomKey = () => `mik_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

  it('a key not known as good spends the keyless budget before any lookup: bad keys cost at most that many queries (issue 31 finding 4)', async () => {
    const c = counted();
    const a = await replica({ cacheMs: 5_000, keys: c.store });
    try {
      const from = { 'x-forwarded-for': '203.0.113.40' };
      const statuses: number[] = [];
      for (let i = 0; i < 80; i++) statuses.push((await fetch(`${a.url}/x`, { headers: { ...from, 'x-api-key': randomKey() } })).status);
      const free = planOf('free').requestsPerMinute;
      expect(statuses).toEqual([...Array(free).fill(401), ...Array(80 - free).fill(429)]);
      expect(c.lookups).toBe(free);
      // A malformed key is refused without a lookup, and the same bad key twice costs one.
      const other = { 'x-forwarded-for': '203.0.113.41' };
      expect((await fetch(`${a.url}/x`, { headers: { ...other, 'x-api-key': 'not-a-key' } })).status).toBe(401);
      const bad = randomKey();
      for (let i = 0; i < 3; i++) expect((await fetch(`${a.url}/x`, { headers: { ...other, 'x-api-key': bad } })).status).toBe(401);
      expect(c.lookups).toBe(free + 1);
      // Each still spent a request of the IP's budget.
      expect((await fetch(`${a.url}/x`, { headers: other })).headers.get('x-ratelimit-remaining')).toBe(String(free - 5));
    } finally {
      await a.close();
    }
  });

  it('bad keys cannot push a good key out of the cache (issue 31 finding 4)', async () => {
    const c = counted();
    // A cache of 500 entries (the service's is KEY_CACHE_ENTRIES): the same flood, at scale.
    const entries = 500;
    const flood = 2 * entries + 200;
    const a = await replica({ cacheMs: 600_000, cacheEntries: entries, keys: c.store });
    try {
      const { key } = await store.create({ tenant, plan: 'pro' });
      expect((await fetch(`${a.url}/x`, { headers: { 'x-api-key': key } })).status).toBe(200);
      expect(c.lookups).toBe(1);
      // 1,200 distinct bad keys (more than twice the cache) from 20 addresses (each within its
      // keyless budget), 32 at a time.
      let sent = 0;
      const statuses = new Map<number, number>();
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = sent++; i < flood; i = sent++) {
            const r = await fetch(`${a.url}/x`, { headers: { 'x-forwarded-for': `198.51.${Math.floor(i / 60) >> 8}.${Math.floor(i / 60) & 255}`, 'x-api-key': randomKey() } });
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          }
        }),
      );
      expect(Object.fromEntries(statuses)).toEqual({ 401: flood });
      const lookups = c.lookups;
      // The good key is still known: served without a query.
      expect((await fetch(`${a.url}/x`, { headers: { 'x-api-key': key } })).status).toBe(200);
      expect(c.lookups).toBe(lookups);
    } finally {
      await a.close();
    }
  }, 60_000);
});
