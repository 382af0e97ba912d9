import { createDatabase, type Database } from '../../core/db';
import { createRedis, redisReady, type Redis } from '../../core/redis/client';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { createApp } from '../../server/app';
import { createApiStores } from '../../server/stores';
import { call, HIGH_LIMITS, serve, walletHeaders, type Json } from '../support/api';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { TEST_REDIS_URL, testTenant } from '../support/redis';
import { startFreezableProxy } from '../support/tcp-proxy';

const HIGH = HIGH_LIMITS;

describe('wallet-authenticated REST (real PostgreSQL, Redis, Ed25519)', () => {
  let tdb: TestDatabase;
  let database: Database;
  let redisA: Redis;
  let redisB: Redis;
  let a: { url: string; close(): Promise<void> };
  let b: { url: string; close(): Promise<void> };
  let trader: { address: string; secretKey: Uint8Array };
  const tenant = testTenant();

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    const common = testCommon({ PROGRAM_ID, TENANT_ID: tenant, ...HIGH });
    const source = createSimulatorSource({ seed: 1001, programId: PROGRAM_ID, untilSlot: 1_500, epochSeconds: 30, wallets: 12 });
    await createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source }).run();
    // The busiest settled trader of the simulated chain.
    const busiest = await database.db.one('SELECT wallet FROM settled_trades GROUP BY wallet ORDER BY count(*) DESC LIMIT 1');
    trader = source.simulator.walletKeys.find((k) => k.address === busiest.wallet)!;
    // Two API replicas sharing one Redis (separate clients): nonces are cluster-wide.
    redisA = createRedis(TEST_REDIS_URL);
    redisB = createRedis(TEST_REDIS_URL);
    await Promise.all([redisReady(redisA), redisReady(redisB)]);
    const ca = testCommon({ TENANT_ID: tenant, ...HIGH });
    const cb = testCommon({ TENANT_ID: tenant, ...HIGH });
    a = await serve(createApp({ common: ca, db: database.db, ...createApiStores(ca, redisA) }));
    b = await serve(createApp({ common: cb, db: database.db, ...createApiStores(cb, redisB) }));
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    redisA.disconnect();
    redisB.disconnect();
    await database.close();
    await tdb.drop();
  });

  const authed = (base: string, path: string, o = {}) => call(`${base}/api/v1${path}`, { headers: walletHeaders(trader, `GET ${path}`, o) });

  it('keeps serving while Redis stops answering: public reads on the insurance limiter, signed reads refused as retryable', async () => {
    const target = new URL(TEST_REDIS_URL);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 6379) });
    // As the API process opens it (with the default REDIS_COMMAND_TIMEOUT_MS).
    const redis = createRedis(proxy.url, { enableAutoPipelining: true });
    redis.on('error', () => {});
    await redisReady(redis);
    const common = testCommon({ TENANT_ID: testTenant(), REQUEST_TIMEOUT_MS: '20000', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '50' });
    const api = await serve(createApp({ common, db: database.db, ...createApiStores(common, redis) }));
    try {
      expect((await call(`${api.url}/api/v1/markets`)).headers.get('x-ratelimit-remaining')).toBe('49');
      proxy.freeze();
      // Counted by this process's insurance limiter, instead of waiting out the request timeout.
      const frozen = await call(`${api.url}/api/v1/markets`);
      expect(frozen.status).toBe(200);
      expect(frozen.headers.get('x-ratelimit-limit')).toBe('50');
      // Without the nonce store a replay cannot be ruled out: refused, as something to retry.
      const signed = await authed(api.url, '/positions');
      expect(signed.status).toBe(503);
      expect(signed.body).toEqual({ error: 'A required service is unavailable', code: 'SERVICE_UNAVAILABLE' });
      proxy.thaw();
      // The same connection serves again once Redis answers.
      expect((await authed(api.url, '/positions')).status).toBe(200);
      expect(await redis.ping()).toBe('PONG');
    } finally {
      await api.close();
      redis.disconnect();
      await proxy.close();
    }
  });

  it('serves the wallet its own positions, with the redeemable balance', async () => {
    const r = await authed(a.url, '/positions');
    expect(r.status).toBe(200);
    const rows = await database.db.any('SELECT address, payout, settled FROM positions WHERE owner = $1', [trader.address]);
    expect(r.body.data.total).toBe(rows.length);
    const balance = rows.filter((p) => p.settled).reduce((s, p) => s + BigInt(p.payout), 0n);
    expect(r.body.data.balance).toBe(balance.toString());
    for (const p of r.body.data.positions) {
      expect(p.owner).toBe(trader.address);
      expect(p.market).toEqual({ oracleFeed: expect.anything(), state: expect.any(Number), outcome: p.market.outcome });
      expect(p.currentYesPrice).toBeGreaterThanOrEqual(0);
      expect(p.currentYesPrice).toBeLessThanOrEqual(10_000);
    }
    const settled = await authed(a.url, '/positions?settled=true');
    expect(settled.body.data.positions.every((p: Json) => p.settled)).toBe(true);
  });

  it('answers 404 when owner names another wallet, 200 when it names the caller', async () => {
    const other = (await database.db.one('SELECT owner FROM positions WHERE owner <> $1 LIMIT 1', [trader.address])).owner;
    const r = await authed(a.url, `/positions?owner=${other}`);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
    expect((await authed(a.url, `/positions?owner=${trader.address}`)).status).toBe(200);
  });

  it('gives each authentication failure its documented code', async () => {
    const path = '/positions';
    const url = `${a.url}/api/v1${path}`;
    const expectCode = async (headers: Record<string, string>, status: number, code: string, error?: string) => {
      const r = await call(url, { headers });
      expect([r.status, r.body.code]).toEqual([status, code]);
      if (error) expect(r.body.error).toBe(error);
    };
    const h = () => walletHeaders(trader, `GET ${path}`);
    const { 'x-wallet-signature': _s, ...noSig } = h();
    await expectCode(noSig, 401, 'MISSING_AUTH_HEADERS');
    await expectCode({}, 401, 'MISSING_AUTH_HEADERS');
    await expectCode(walletHeaders(trader, `GET ${path}`, { forge: true }), 401, 'INVALID_SIGNATURE');
    await expectCode({ ...h(), 'x-wallet-signature': 'not-base58!' }, 401, 'INVALID_SIGNATURE');
    await expectCode({ ...h(), 'x-wallet-pubkey': 'short' }, 401, 'UNAUTHORIZED');
    const now = Math.floor(Date.now() / 1000);
    // A few seconds clear of the edges: the server's clock may tick between signing and checking.
    await expectCode(walletHeaders(trader, `GET ${path}`, { timestamp: now - 305 }), 401, 'MESSAGE_EXPIRED');
    await expectCode(walletHeaders(trader, `GET ${path}`, { timestamp: now + 35 }), 401, 'MESSAGE_EXPIRED');
    expect((await call(url, { headers: walletHeaders(trader, `GET ${path}`, { timestamp: now - 290 }) })).status).toBe(200);
    expect((await call(url, { headers: walletHeaders(trader, `GET ${path}`, { timestamp: now + 25 }) })).status).toBe(200);
    await expectCode(walletHeaders(trader, 'GET /orders'), 401, 'UNAUTHORIZED', 'Action does not match request');
    await expectCode(walletHeaders(trader, `GET /api/v1${path}`), 401, 'UNAUTHORIZED', 'Action does not match request');
    await expectCode(walletHeaders(trader, `GET ${path}`, { chain: 'solana-devnet' }), 401, 'UNAUTHORIZED', 'Chain mismatch');
    await expectCode(walletHeaders(trader, `GET ${path}`, { chainHeader: 'solana-devnet' }), 401, 'UNAUTHORIZED', 'Chain mismatch');
    await expectCode(walletHeaders(trader, `GET ${path}`, { domain: 'evil.example' }), 401, 'UNAUTHORIZED', 'Domain mismatch');
    await expectCode(walletHeaders(trader, `GET ${path}`, { rawMessage: '{"not":"complete"' }), 401, 'UNAUTHORIZED');
    // A legacy message without `chain` is the supported chain.
    expect((await call(url, { headers: walletHeaders(trader, `GET ${path}`, { chain: null }) })).status).toBe(200);
    expect((await call(url, { headers: walletHeaders(trader, `GET ${path}`, { chainHeader: 'solana-mainnet' }) })).status).toBe(200);
  });

  it('refuses a nonce replayed on a second API replica, and does not burn it on a refused request', async () => {
    const headers = walletHeaders(trader, 'GET /positions', { nonce: 'replay-me-123' });
    expect((await call(`${a.url}/api/v1/positions`, { headers })).status).toBe(200);
    const replay = await call(`${b.url}/api/v1/positions`, { headers });
    expect([replay.status, replay.body.code, replay.body.error]).toEqual([401, 'UNAUTHORIZED', 'Nonce already used']);
    const expired = walletHeaders(trader, 'GET /positions', { nonce: 'fresh-nonce-456', timestamp: Math.floor(Date.now() / 1000) - 400 });
    expect((await call(`${a.url}/api/v1/positions`, { headers: expired })).status).toBe(401);
    expect((await call(`${b.url}/api/v1/positions`, { headers: walletHeaders(trader, 'GET /positions', { nonce: 'fresh-nonce-456' }) })).status).toBe(200);
  });

  it('lists the wallet orders with the 2.6 fields and status filter; ?tx= stays public', async () => {
    const r = await authed(a.url, '/orders?status=filled&limit=5');
    expect(r.status).toBe(200);
    const n = (await database.db.one('SELECT count(*)::int AS n FROM orders WHERE owner = $1 AND status_code = 1', [trader.address])).n;
    expect(r.body.data).toMatchObject({ total: n, limit: 5, offset: 0 });
    for (const o of r.body.data.orders) {
      expect(o).toMatchObject({ owner: trader.address, status: 'filled', statusCode: 1 });
      expect(o.sideLabel).toBe(['buy_yes', 'sell_yes', 'buy_no', 'sell_no'][o.sideCode]);
      expect(o.isYes).toBe(o.side === 'yes');
    }
    expect((await call(`${a.url}/api/v1/orders`)).body.code).toBe('MISSING_AUTH_HEADERS');
    const tx = (await database.db.one('SELECT tx_signature FROM trades LIMIT 1')).tx_signature;
    const pub = await call(`${a.url}/api/v1/orders?tx=${tx}`);
    expect(pub.status).toBe(200);
    expect(pub.body.trades.length).toBeGreaterThan(0);
    const alias = await call(`${a.url}/orders?tx=${tx}`);
    expect(alias.headers.get('deprecation')).toBe('true');
    expect(alias.body).toEqual(pub.body);
  });

  it('serves stored personal stats and the settled trade history by keyset', async () => {
    const stats = await authed(a.url, '/stats');
    const stored = await database.db.one('SELECT * FROM user_stats WHERE wallet = $1', [trader.address]);
    expect(stats.body.data).toMatchObject({
      totalTrades: stored.total_trades, winningTrades: stored.winning_trades, losingTrades: stored.losing_trades, totalPnl: stored.total_pnl,
    });
    expect(stats.body.data.winRate).toBeCloseTo((stored.winning_trades / stored.total_trades) * 100, 1);

    const all = await database.db.map(
      'SELECT id FROM settled_trades WHERE wallet = $1 ORDER BY settled_at DESC, id DESC',
      [trader.address],
      (x: { id: string }) => Number(x.id),
    );
    expect(all.length).toBeGreaterThan(3);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/stats/trades?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await authed(a.url, path);
      expect(page.status).toBe(200);
      expect(page.body.data.total).toBe(all.length);
      seen.push(...page.body.data.trades.map((t: Json) => t.id));
      cursor = page.body.data.hasMore ? page.body.data.nextCursor : null;
      if (!page.body.data.hasMore) expect(page.body.data.nextCursor).toBeNull();
    } while (cursor);
    expect(seen).toEqual(all);
    const wins = await authed(a.url, '/stats/trades?outcome=win&limit=1000');
    expect(wins.body.data.trades.every((t: Json) => t.outcome === 'win' && BigInt(t.pnl) > 0n)).toBe(true);
    const both = await authed(a.url, '/stats/trades?cursor=abc&offset=0');
    expect([both.status, both.body.code]).toEqual([400, 'INVALID_PARAMETER']);
    expect((await authed(a.url, '/stats/trades?cursor=bm9wZQ')).body.code).toBe('INVALID_PARAMETER');
  });

  it('computes stats on the fly for a wallet without a stored record', async () => {
    // The indexer stores a record for every settling wallet: remove this one's to force the computed path.
    const fresh = trader;
    await database.db.none('DELETE FROM user_stats WHERE wallet = $1', [fresh.address]);
    const computed = await authed(a.url, '/stats');
    const rows = await database.db.any('SELECT pnl, is_win FROM settled_trades WHERE wallet = $1', [fresh.address]);
    expect(computed.body.data.totalTrades).toBe(rows.length);
    expect(computed.body.data.totalPnl).toBe(rows.reduce((s, r) => s + BigInt(r.pnl), 0n).toString());
    expect(computed.body.data.winningTrades).toBe(rows.filter((r) => r.is_win).length);
  });

  it('serves P&L history for the caller and publicly for any wallet, with days bounds', async () => {
    const mine = await authed(a.url, '/stats/history?days=7');
    expect(mine.body.data.history).toHaveLength(7);
    const pub = await call(`${a.url}/api/v1/stats/user/${trader.address}/pnl-history?days=7`);
    expect(pub.body).toEqual(mine.body);
    for (const d of ['0', '366', 'x']) expect((await call(`${a.url}/api/v1/stats/user/${trader.address}/pnl-history?days=${d}`)).status).toBe(400);
    expect((await call(`${a.url}/api/v1/stats/user/${trader.address}/pnl-history`)).body.data.history).toHaveLength(30);
  });

  it('serves achievements, grouped by category with totals', async () => {
    const all = await call(`${a.url}/api/v1/achievements/all`);
    expect(all.body.data.achievements.length).toBeGreaterThanOrEqual(9);
    const mine = await authed(a.url, '/achievements');
    const { achievements, grouped, stats } = mine.body.data;
    expect(Object.keys(grouped).sort()).toEqual(['accuracy', 'exploration', 'streak', 'trading']);
    expect(stats.total).toBe(achievements.length);
    expect(stats.unlocked).toBe(achievements.filter((x: Json) => x.unlockedAt !== null).length);
    expect(achievements.find((x: Json) => x.code === 'first_trade')).toMatchObject({ progress: 1, unlockedAt: expect.any(String) });
  });

  it('serves referrals, creators and the open-shape public reads', async () => {
    const lock = await database.db.oneOrNone('SELECT wallet, referrer FROM referral_locks LIMIT 1');
    if (lock) {
      const r = await call(`${a.url}/api/v1/v2/referral/${lock.wallet}`);
      expect(r.body).toMatchObject({ success: true, data: { wallet: lock.wallet, referrer: lock.referrer, isLocked: expect.any(Boolean) } });
    }
    expect((await call(`${a.url}/api/v1/v2/referral/11111111111111111111111111111111`)).body).toEqual({ success: true, data: null });
    const creator = (await database.db.one('SELECT creator FROM markets LIMIT 1')).creator;
    const c = await call(`${a.url}/api/v1/creators/${creator}`);
    expect(c.body.data.walletAddress).toBe(creator);
    for (const d of c.body.data.deferredFees) expect(BigInt(d.accumulatedCreatorFees) > 0n).toBe(true);
    const diag = await call(`${a.url}/api/v1/v2/referrals/diagnostics`);
    expect(diag.body.data.checks).toEqual({ creditsMatchEarnings: true, earningsBalance: true, creditsMatchTradeFees: true });
    expect((await call(`${a.url}/api/v1/v2/referrals/leaderboard?limit=101`)).status).toBe(400);
    // The indexer keeps these totals; they equal the sums over the tables they summarize.
    const platform = (await call(`${a.url}/api/v1/stats/platform`)).body.data;
    const sums = await database.db.one(
      `SELECT count(*)::int AS markets, COALESCE(sum(total_volume), 0)::text AS volume, COALESCE(sum(total_trades), 0)::int AS trades,
              COALESCE(sum(total_positions), 0)::int AS positions, COALESCE(sum(creator_fees_earned), 0)::text AS creator_fees,
              (SELECT count(*)::int FROM trader_activity) AS traders, (SELECT COALESCE(sum(fee_protocol), 0)::text FROM trades) AS protocol_fees,
              (SELECT count(*)::int FROM orders WHERE status_code IN (0, 4, 5)) AS resting
         FROM markets`,
    );
    expect(sums.trades).toBeGreaterThan(0);
    expect(platform).toMatchObject({
      markets: { total: sums.markets },
      totalVolume: sums.volume,
      totalTrades: sums.trades,
      totalPositions: sums.positions,
      uniqueTraders: sums.traders,
      restingOrders: sums.resting,
      protocolFees: sums.protocol_fees,
      creatorFees: sums.creator_fees,
    });
    expect((await call(`${a.url}/api/v1/leaderboard?metric=volume&limit=3`)).body.data.leaderboard).toHaveLength(3);
    expect((await call(`${a.url}/api/v1/challenges/today`)).body.data.challenges).toHaveLength(3);
    const analytics = await call(`${a.url}/api/v1/v2/wallet/${trader.address}/analytics`);
    expect(analytics.body.data.trading.totalPnl).toMatch(/^-?\d+$/);
  });
});

describe('rate limits shared by two API replicas through Redis', () => {
  let database: Database;
  let tdb: TestDatabase;
  const redis: Redis[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 2 });
  });
  afterAll(async () => {
    redis.forEach((r) => r.disconnect());
    await database.close();
    await tdb.drop();
  });

  async function replicas(env: Record<string, string>) {
    const tenant = testTenant();
    const servers = [];
    for (let i = 0; i < 2; i++) {
      const r = createRedis(TEST_REDIS_URL);
      redis.push(r);
      await redisReady(r);
      const common = testCommon({ TENANT_ID: tenant, ...env });
      servers.push({ ...(await serve(createApp({ common, db: database.db, ...createApiStores(common, r) }))), common });
    }
    return servers;
  }

  it('refuses the request past each tier limit with 429, Retry-After and the limit headers', async () => {
    const [x, y] = await replicas({ PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '3', RATE_LIMIT_MAX_REQUESTS: '2', RATE_LIMIT_SENSITIVE_MAX: '2' });
    const hit = (s: { url: string }, path: string, headers: Record<string, string> = {}) => call(`${s.url}/api/v1${path}`, { headers });
    // public market reads: 3 across both replicas.
    const first = await hit(x!, '/markets');
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    await hit(y!, '/markets');
    await hit(x!, '/markets/current');
    const refused = await hit(y!, '/markets');
    expect([refused.status, refused.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // Another tier keeps its own quota: public other = 2.
    expect((await hit(x!, '/achievements/all')).status).toBe(200);
    expect((await hit(y!, '/achievements/all')).status).toBe(200);
    expect((await hit(x!, '/achievements/all')).status).toBe(429);
    const metrics = await x!.common.metrics.rateLimitExceeded.get();
    // Every tier's counter exists from the start at 0 (D-88); only the refused ones count.
    expect(metrics.values.filter((v) => v.value > 0).map((v) => v.labels.tier).sort()).toEqual(['public']);
    expect((await y!.common.metrics.rateLimitExceeded.get()).values.filter((v) => v.value > 0).map((v) => v.labels.tier)).toEqual(['public_read']);
    await Promise.all([x!, y!].map((s) => s.close()));
  });

  it('limits sensitive routes per verified wallet and ignores a forged X-Forwarded-For', async () => {
    const [x, y] = await replicas({ RATE_LIMIT_SENSITIVE_MAX: '2', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '2' });
    const { keyPairOf } = await import('../../simulator/ids');
    const w = keyPairOf('rate-limit-wallet');
    const pos = (s: { url: string }) => call(`${s.url}/api/v1/positions`, { headers: walletHeaders(w, 'GET /positions') });
    expect((await pos(x!)).status).toBe(200);
    expect((await pos(y!)).status).toBe(200);
    const refused = await pos(x!);
    expect([refused.status, refused.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('2');
    // TRUST_PROXY is off: a forged header does not buy a fresh per-IP quota.
    const forged = (ip: string) => call(`${x!.url}/api/v1/markets`, { headers: { 'x-forwarded-for': ip } });
    expect((await forged('1.1.1.1')).status).toBe(200);
    expect((await forged('2.2.2.2')).status).toBe(200);
    expect((await forged('3.3.3.3')).status).toBe(429);
    await Promise.all([x!, y!].map((s) => s.close()));
  });
});
