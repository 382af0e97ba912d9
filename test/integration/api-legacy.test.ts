import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_REFERENCE_DIR } from '../../server/http/docs';
import { createApiKeyStore } from '../../core/api-keys';
import { createDatabase, type Database } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createOracleIngest } from '../../indexer/oracle';
import { createSimulatorSource } from '../../simulator/source';
import { createApp } from '../../server/app';
import { createPlanLimits } from '../../server/limits/plan-limits';
import { legacyPresentation } from '../../server/routes/legacy';
import { LEGACY_ERROR_STATUS, LegacyError, type LegacyCode } from '../../server/routes/legacy/envelope';
import { createApiStores } from '../../server/stores';
import { serve, type Json } from '../support/api';
import { expectLegacyError } from '../support/legacy';
import { createOpenApiChecker, OPENAPI_LEGACY_PATH } from '../support/openapi';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';

const MARKET_KEYS = [
  'id', 'marketId', 'pythFeed', 'settlementMint', 'tStart', 'tEnd', 'startPrice', 'endPrice', 'outcome', 'totalYesShares',
  'totalNoShares', 'totalCollateral', 'totalVolume', 'state', 'createdAt', 'updatedAt',
].sort();

const contract = createOpenApiChecker(OPENAPI_LEGACY_PATH);

describe('the appendix variant (API_VARIANT=legacy) over data the indexer wrote (real PostgreSQL, real HTTP)', () => {
  let tdb: TestDatabase;
  let database: Database;
  let legacy: { url: string; close(): Promise<void> };
  let v1: { url: string; close(): Promise<void> };
  let key: string;
  const tenant = 'legacy-test';

  /**
   * A GET with the suite's Pro key (the Free plan's 60 a minute would not last the suite), its
   * response checked against api-reference/openapi-legacy.yaml before the test sees it.
   */
  async function get(path: string, headers: Record<string, string> = {}) {
    const url = `${legacy.url}/api/v1${path}`;
    const res = await fetch(url, { headers: { 'x-api-key': key, ...headers } });
    const body = (await res.json()) as Json;
    contract.assertMatches('GET', url, res.status, res.headers.get('content-type'), body);
    return { status: res.status, headers: res.headers, body };
  }
  function expectOk(r: { status: number; body: Json }) {
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(Number.isInteger(r.body.timestamp)).toBe(true);
    expect(Math.abs(r.body.timestamp - Date.now())).toBeLessThan(60_000);
    return r.body.data;
  }
  const expectError = expectLegacyError;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    const common = testCommon({ PROGRAM_ID, TENANT_ID: tenant });
    const source = createSimulatorSource({ seed: 909, programId: PROGRAM_ID, untilSlot: 1_500, epochSeconds: 30 });
    await createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source }).run();
    await createOracleIngest({ db: database.db, source, logger: common.logger }).poll();
    const keys = createApiKeyStore(database.db);
    key = (await keys.create({ tenant, plan: 'pro' })).key;
    const stores = createApiStores(common, undefined);
    const plans = createPlanLimits({ tenant, keys, store: undefined, logger: common.logger, metrics: common.metrics, cacheMs: 0 });
    legacy = await serve(createApp({ common, db: database.db, presentation: legacyPresentation, plans, docs: true, ...stores }));
    v1 = await serve(createApp({ common, db: database.db, ...createApiStores(common, undefined) }));
  }, 120_000);
  afterAll(async () => {
    await legacy.close();
    await v1.close();
    await database.close();
    await tdb.drop();
  });

  it('declares a status for every code, and each code error carries it', () => {
    for (const [code, status] of Object.entries(LEGACY_ERROR_STATUS)) expect(new LegacyError(code as LegacyCode, 'x').status).toBe(status);
  });

  it('lists markets in the envelope with the appendix fields, 20 a page, newest first', async () => {
    const r = await get('/markets');
    const data = expectOk(r);
    expect(data).toHaveLength(20);
    expect(r.body.pagination).toEqual({ hasMore: true, nextCursor: expect.any(String) });
    for (const m of data) {
      expect(Object.keys(m).sort()).toEqual(MARKET_KEYS);
      expect(['CREATED', 'TRADING', 'SETTLING', 'RESOLVED']).toContain(m.state);
      expect([null, 'UP', 'DOWN']).toContain(m.outcome);
      expect(Number.isInteger(m.tStart) && m.tEnd > m.tStart).toBe(true);
      expect(m.totalVolume).toMatch(/^\d+$/);
    }
    const ids = data.map((m: Json) => BigInt(m.marketId));
    expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
  });

  it('walks every market once through the cursors, and a market inserted meanwhile does not shift the pages', async () => {
    const all = (await database.db.any<{ address: string }>('SELECT address FROM markets ORDER BY market_id DESC, id DESC')).map((r) => r.address);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await get(`/markets?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...expectOk(r).map((m: Json) => m.id));
      cursor = r.body.pagination.nextCursor;
      if (pages++ === 0) {
        // A newer market lands between the first and the second page.
        await database.db.none(
          `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, created_at, updated_at, created_slot, created_signature)
           VALUES (1000000, 'NewMarket1111111111111111111111111111111111', 99999999999, 'So11111111111111111111111111111111111111112', 1, now(), now() + interval '1 minute', now(), now(), 1, 'sig')`,
        );
      }
    } while (cursor);
    expect(seen).toEqual(all);
    await database.db.none('DELETE FROM markets WHERE id = 1000000');
  });

  it('filters by state (RESOLVED covers closed markets) and refuses bad filters and cursors', async () => {
    const resolved = expectOk(await get('/markets?state=RESOLVED&limit=100'));
    const n = (await database.db.one('SELECT count(*)::int AS n FROM markets WHERE state IN (4, 5)')).n;
    expect(resolved.length).toBe(Math.min(100, n));
    expect(resolved.every((m: Json) => m.state === 'RESOLVED' && m.endPrice !== null)).toBe(true);
    expect(resolved.some((m: Json) => m.outcome !== null)).toBe(true);
    const feed = resolved[0].pythFeed;
    expect(expectOk(await get(`/markets?pythFeed=${feed}&limit=100`)).every((m: Json) => m.pythFeed === feed)).toBe(true);
    for (const q of ['state=closed', 'limit=101', 'limit=0', 'cursor=bm90LWEtY3Vyc29y', 'cursor=%21', 'pythFeed=x', 'foo=1']) expectError(await get(`/markets?${q}`), 'VALIDATION_ERROR');
  });

  it('serves one market by address or epoch id; a bad id is INVALID_MARKET_ID, an unknown one MARKET_NOT_FOUND', async () => {
    const row = await database.db.one('SELECT address, market_id FROM markets WHERE state = 4 ORDER BY id LIMIT 1');
    const byAddress = expectOk(await get(`/markets/${row.address}`));
    expect(Object.keys(byAddress).sort()).toEqual([...MARKET_KEYS, 'bestAsk', 'bestBid'].sort());
    expect(byAddress.id).toBe(row.address);
    expect(expectOk(await get(`/markets/${row.market_id}`)).marketId).toBe(String(row.market_id));
    expectError(await get('/markets/not-an-id!'), 'INVALID_MARKET_ID');
    expectError(await get('/markets/123456789012345'), 'MARKET_NOT_FOUND');
    expectError(await get('/markets/not-an-id!/stats'), 'INVALID_MARKET_ID');
  });

  it('serves the current market, its stats and its book', async () => {
    const current = expectOk(await get('/markets/current'));
    expect(current).toHaveProperty('bestBid');
    const traded = await database.db.one('SELECT address, market_id, total_trades, total_volume FROM markets WHERE total_trades > 0 ORDER BY id LIMIT 1');
    const stats = expectOk(await get(`/markets/${traded.address}/stats`));
    expect(stats).toMatchObject({ marketId: String(traded.market_id), totalTrades: Number(traded.total_trades), totalVolume: String(traded.total_volume) });
    expect(stats.uniqueTraders).toBeGreaterThan(1);
    expect(Array.isArray(stats.priceHistory)).toBe(true);
    const open = await database.db.oneOrNone('SELECT address, best_bid, best_ask FROM markets WHERE best_bid IS NOT NULL AND best_ask IS NOT NULL LIMIT 1');
    if (open) {
      const book = expectOk(await get(`/orderbook/${open.address}?depth=3`));
      expect(book).toMatchObject({ bestBid: open.best_bid, bestAsk: open.best_ask, spread: open.best_ask - open.best_bid });
      expect(book.bids.length).toBeLessThanOrEqual(3);
      const bids = expectOk(await get(`/orderbook/${open.address}/orders?side=bid`)).orders;
      expect(bids.length).toBeGreaterThan(0);
      expect(bids.every((o: Json) => ['BuyYes', 'SellNo'].includes(o.side) && o.isActive)).toBe(true);
    }
  });

  it('serves positions, a position, and the summary; an absent position is POSITION_NOT_FOUND', async () => {
    const p = await database.db.one('SELECT market_address, owner FROM positions ORDER BY id LIMIT 1');
    const one = expectOk(await get(`/positions/${p.market_address}/${p.owner}`));
    expect(Object.keys(one).sort()).toEqual(
      ['market', 'owner', 'yesShares', 'noShares', 'lockedYesShares', 'lockedNoShares', 'collateralDeposited', 'collateralLocked', 'settled', 'payout', 'totalBought', 'totalSold', 'totalFeesPaid', 'totalRebatesEarned', 'orderCount', 'createdAt', 'updatedAt'].sort(),
    );
    expect(one.orderCount).toBeGreaterThan(0);
    expectError(await get(`/positions/${p.market_address}/So11111111111111111111111111111111111111112`), 'POSITION_NOT_FOUND');
    const list = expectOk(await get(`/positions/${p.owner}?limit=100`));
    const n = (await database.db.one('SELECT count(*)::int AS n FROM positions WHERE owner = $1', [p.owner])).n;
    expect(list.length).toBe(Math.min(100, n));
    expect(expectOk(await get(`/positions/${p.owner}?settled=true&limit=100`)).every((x: Json) => x.settled)).toBe(true);
    const s = expectOk(await get(`/positions/${p.owner}/summary`));
    expect(s).toMatchObject({ owner: p.owner, totalPositions: n });
    expect(s.activePositions + s.settledPositions).toBe(n);
    expect(s.winRate).toBeGreaterThanOrEqual(0);
    expect(s.winRate).toBeLessThanOrEqual(1);
  });

  it('serves trades of a market and of a wallet by role', async () => {
    const t = await database.db.one('SELECT market_address, taker FROM trades ORDER BY id LIMIT 1');
    const trades = expectOk(await get(`/trades/${t.market_address}?limit=5`));
    expect(trades.length).toBeGreaterThan(0);
    expect(Object.keys(trades[0]).sort()).toEqual(['id', 'marketId', 'takerOrderId', 'makerOrderId', 'taker', 'maker', 'side', 'priceBps', 'quantity', 'takerFee', 'makerRebate', 'timestamp', 'signature'].sort());
    const buyYes = expectOk(await get(`/trades/${t.market_address}?side=BuyYes&limit=100`));
    expect(buyYes.every((x: Json) => x.side === 'BuyYes')).toBe(true);
    const asTaker = expectOk(await get(`/trades/user/${t.taker}?role=taker&limit=100`));
    expect(asTaker.length).toBeGreaterThan(0);
    expect(asTaker.every((x: Json) => x.taker === t.taker)).toBe(true);
    expect(expectOk(await get(`/trades/user/${t.taker}?role=maker&limit=100`)).every((x: Json) => x.maker === t.taker)).toBe(true);
    expectError(await get(`/trades/user/${t.taker}?role=both`), 'VALIDATION_ERROR');
  });

  it('serves the oracle price and its candles', async () => {
    const feed = (await database.db.one('SELECT feed FROM oracle_observations LIMIT 1')).feed;
    const o = expectOk(await get(`/oracle/${feed}`));
    expect(Object.keys(o).sort()).toEqual(['confidence', 'confidenceFormatted', 'exponent', 'feed', 'price', 'priceFormatted', 'publishTime'].sort());
    expect(o.exponent).toBe(-8);
    expect(o.priceFormatted).toBe(`${o.price.slice(0, -8)}.${o.price.slice(-8)}`);
    const h = expectOk(await get(`/oracle/${feed}/history?from=0&to=${o.publishTime + 1}&interval=5m`));
    expect(h.feed).toBe(feed);
    expect(h.candles.length).toBeGreaterThan(0);
    expect(h.candles[0]).toEqual({ timestamp: expect.any(Number), open: expect.any(String), high: expect.any(String), low: expect.any(String), close: expect.any(String) });
    expectError(await get('/oracle/So11111111111111111111111111111111111111112'), 'NOT_FOUND');
    expectError(await get(`/oracle/${feed}/history?interval=2m`), 'VALIDATION_ERROR');
  });

  it('serves the protocol config and stats, and health in its shape', async () => {
    const c = expectOk(await get('/protocol/config'));
    expect(c).toMatchObject({ programId: PROGRAM_ID, authority: null, treasury: null, makerRebateBps: 0 });
    expect(c.marketsCreated).toBe((await database.db.one('SELECT count(*)::int AS n FROM markets')).n);
    const s = expectOk(await get('/protocol/stats?period=30d'));
    expect(Object.keys(s).sort()).toEqual(['avgMarketVolume', 'downOutcomes', 'marketsCreated', 'marketsResolved', 'period', 'totalTrades', 'totalVolume', 'uniqueTraders', 'upOutcomes'].sort());
    expectError(await get('/protocol/stats?period=1y'), 'VALIDATION_ERROR');
    const h = expectOk(await get('/health'));
    expect(Object.keys(h).sort()).toEqual(['indexerLag', 'lastBlockIndexed', 'status', 'uptime', 'version']);
    expect(h.lastBlockIndexed).toBe(1_500);
  });

  it('answers the plan headers, and a bad key with INVALID_API_KEY', async () => {
    const r = await get('/protocol/config');
    expect(r.headers.get('x-ratelimit-limit')).toBe('1000');
    expectError(await get('/protocol/config', { 'x-api-key': 'mik_000000000000_nope' }), 'INVALID_API_KEY');
  });

  it('serves no v1-only route, and v1 serves none of its own: each with its own envelope', async () => {
    expectError(await get('/fee-config'), 'NOT_FOUND');
    expectError(await get('/status'), 'NOT_FOUND');
    const post = await fetch(`${legacy.url}/api/v1/markets`, { method: 'POST', headers: { 'x-api-key': key } });
    const postBody = (await post.json()) as Json;
    contract.assertMatches('POST', post.url, post.status, post.headers.get('content-type'), postBody);
    expectError({ status: post.status, body: postBody }, 'METHOD_NOT_ALLOWED');
    // Its /docs renders its own document; both are served.
    expect(await (await fetch(`${legacy.url}/docs/init.js`)).text()).toContain("url: '/docs/openapi-legacy.yaml'");
    // Each body is read to its end: one this large left unread holds its socket open (paused,
    // never reading the server's close) until the Jest worker ends.
    const openapi = await fetch(`${legacy.url}/docs/openapi.yaml`);
    expect([openapi.status, (await openapi.text()).length > 0]).toEqual([200, true]);
    // Both AsyncAPI documents too, as the files are.
    for (const doc of ['asyncapi.yaml', 'asyncapi-legacy.yaml']) {
      const r = await fetch(`${legacy.url}/docs/${doc}`);
      expect([doc, r.status, r.headers.get('content-type')]).toEqual([doc, 200, 'application/yaml']);
      expect(await r.text()).toBe(readFileSync(path.join(API_REFERENCE_DIR, doc), 'utf8'));
    }
    // The root aliases name v1 operations: none is rewritten here. `/orderbook/top` would
    // otherwise reach `/orderbook/:marketId` with `top` as the id and answer INVALID_MARKET_ID.
    for (const root of ['/orderbook/top', '/config', '/status', '/trades', '/v2/referral/x']) {
      const r = await fetch(`${legacy.url}${root}`, { headers: { 'x-api-key': key } });
      const body = (await r.json()) as Json;
      expectError({ status: r.status, body }, 'NOT_FOUND');
      expect([root, r.headers.get('deprecation')]).toEqual([root, null]);
    }
    // The /api/ prefix is an alias of every operation, so it serves this variant's too.
    const prefixed = await fetch(`${legacy.url}/api/protocol/config`, { headers: { 'x-api-key': key } });
    expect([prefixed.status, prefixed.headers.get('deprecation'), ((await prefixed.json()) as Json).success]).toEqual([200, 'true', true]);
    const fromV1 = await fetch(`${v1.url}/api/v1/protocol/config`);
    expect(fromV1.status).toBe(404);
    expect(await fromV1.json()).toEqual({ error: 'Not found', code: 'NOT_FOUND' });
  });
});
