import net from 'node:net';
import fc from 'fast-check';
import { createDatabase } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { apiSuite, createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { call, type Json } from '../support/api';
import { createTestDatabase } from '../support/pg';
import { waitFor } from '../support/tables';

const get = call;

function expectError(r: { status: number; body: Json }, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.body.code).toBe(code);
  expect(typeof r.body.error).toBe('string');
  expect(Object.keys(r.body).filter((k) => k !== 'details').sort()).toEqual(['code', 'error']);
}

describe('REST reads over data the indexer wrote (real PostgreSQL, real HTTP)', () => {
  const suite = apiSuite();
  let url: string;
  const v1 = (p: string) => `${url}/api/v1${p}`;

  beforeAll(async () => {
    const common = testCommon({ PROGRAM_ID });
    // Markets in every state, orders, fills, fee and tick changes: written by the indexer itself.
    const source = createSimulatorSource({ seed: 909, programId: PROGRAM_ID, untilSlot: 1_500, epochSeconds: 30 });
    await createIndexer({ common, db: suite.db, pgp: suite.database.pgp, databaseUrl: suite.url, updates: undefined, source }).run();
    url = await suite.startInMemory(common, suite.db);
  });

  it('lists markets newest first with every field of spec 2.2 and the pagination envelope', async () => {
    const r = await get(v1('/markets'));
    expect(r.status).toBe(200);
    const { markets, total, limit, offset } = r.body.data;
    const n = (await suite.db.one('SELECT count(*)::int AS n FROM markets')).n;
    expect({ total, limit, offset }).toEqual({ total: n, limit: 50, offset: 0 });
    expect(markets.length).toBe(Math.min(50, n));
    for (const m of markets) {
      expect(Object.keys(m).sort()).toEqual(
        ['address', 'bestAsk', 'bestBid', 'creator', 'durationSeconds', 'endPrice', 'endPriceConf', 'endPriceExpo', 'id', 'marketId', 'maxConfidenceRatioBps', 'oracleFeed', 'oracleFeedId', 'outcome', 'startPrice', 'startPriceConf', 'startPriceExpo', 'state', 'tEnd', 'tStart', 'totalPositions', 'totalTrades', 'totalVolume'].sort(),
      );
      expect(m.marketId).toMatch(/^\d+$/);
      expect(m.totalVolume).toMatch(/^\d+$/);
      expect(typeof m.totalTrades).toBe('number');
      expect(new Date(m.tStart).toISOString()).toBe(m.tStart);
    }
    const ids = markets.map((m: Json) => BigInt(m.marketId));
    expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    const page2 = await get(v1('/markets?limit=3&offset=3'));
    expect(page2.body.data.markets.map((m: Json) => m.id)).toEqual(markets.slice(3, 6).map((m: Json) => m.id));
    const resolved = await get(v1('/markets?state=4'));
    expect(resolved.body.data.markets.length).toBeGreaterThan(0);
    expect(resolved.body.data.markets.every((m: Json) => m.state === 4 && m.outcome !== null)).toBe(true);
  });

  it('rejects out-of-range paging and foreign chains with INVALID_PARAMETER and details', async () => {
    for (const q of ['limit=101', 'limit=0', 'offset=1000001', 'offset=-1', 'state=6', 'state=abc', 'chain=ethereum', 'limit=1e3']) {
      const r = await get(v1(`/markets?${q}`));
      expectError(r, 400, 'INVALID_PARAMETER');
      expect(r.body.details[0]).toEqual({ field: `query.${q.split('=')[0]}`, message: expect.any(String) });
    }
    expect((await get(v1('/markets?offset=1000000'))).status).toBe(200);
    expect((await get(v1('/markets?chain=solana-mainnet'))).status).toBe(200);
  });

  it('serves the current trading market with the fields of spec 2.3', async () => {
    const r = await get(v1('/markets/current'));
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('trading');
    const m = r.body.data.market;
    expect(m.state).toBe(2);
    for (const k of ['id', 'address', 'marketId', 'oracleFeed', 'settlementMint', 'tStart', 'tEnd', 'startPrice', 'startPriceConf', 'startPriceExpo', 'endPrice', 'endPriceConf', 'endPriceExpo', 'outcome', 'totalYesShares', 'totalNoShares', 'totalVolume', 'totalTrades', 'totalPositions', 'state', 'createdAt', 'resolvedAt']) {
      expect(m).toHaveProperty(k);
    }
  });

  it('serves market detail by address and by epoch id, with a 10-level book sorted per side', async () => {
    const busiest = await suite.db.one(
      `SELECT m.address, m.market_id FROM markets m JOIN orderbook_levels l ON l.market_address = m.address
        GROUP BY m.address, m.market_id ORDER BY count(*) DESC LIMIT 1`,
    );
    const byAddress = await get(v1(`/markets/${busiest.address}`));
    expect(byAddress.status).toBe(200);
    const { market, orderbook } = byAddress.body.data;
    expect(market.orderbook).toEqual(orderbook);
    const levels = await suite.db.any('SELECT book_side, price_bps, quantity, orders FROM orderbook_levels WHERE market_address = $1', [busiest.address]);
    const bids = levels.filter((l) => l.book_side === 0).sort((a, b) => b.price_bps - a.price_bps).slice(0, 10);
    const asks = levels.filter((l) => l.book_side === 1).sort((a, b) => a.price_bps - b.price_bps).slice(0, 10);
    expect(orderbook.bids).toEqual(bids.map((l) => ({ price: l.price_bps, quantity: l.quantity, orders: l.orders })));
    expect(orderbook.asks).toEqual(asks.map((l) => ({ price: l.price_bps, quantity: l.quantity, orders: l.orders })));
    const tick = await suite.db.oneOrNone('SELECT tick_size_bps FROM tick_size_history ORDER BY slot DESC, event_index DESC LIMIT 1');
    expect(market.tickSizeBps).toBe(tick?.tick_size_bps ?? 100);
    const fee = await suite.db.oneOrNone('SELECT fee_cap_bps, decay_rate_bps FROM fee_config_history ORDER BY slot DESC, event_index DESC LIMIT 1');
    expect(market.feeConfig).toEqual(fee ? { feeCapBps: fee.fee_cap_bps, decayRateBps: fee.decay_rate_bps } : { feeCapBps: 200, decayRateBps: 600 });
    expect(market.accumulatedCreatorFees).toMatch(/^\d+$/);

    const first = await suite.db.one('SELECT address FROM markets WHERE market_id = $1 ORDER BY id LIMIT 1', [busiest.market_id]);
    const byId = await get(v1(`/markets/${busiest.market_id}`));
    expect(byId.body.data.market.address).toBe(first.address);

    expectError(await get(v1('/markets/99999999999')), 404, 'NOT_FOUND');
    expectError(await get(v1('/markets/not-a-market!')), 400, 'INVALID_PARAMETER');
  });

  it('serves trades of a transaction and recent trades, snake_case with aliases, unwrapped', async () => {
    const t = await suite.db.one('SELECT tx_signature, count(*)::int AS n FROM trades GROUP BY tx_signature ORDER BY count(*) DESC LIMIT 1');
    const r = await get(v1(`/trades?tx=${t.tx_signature}`));
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['trades']);
    expect(r.body.trades).toHaveLength(t.n);
    for (const tr of r.body.trades) {
      expect(tr.tx_signature).toBe(t.tx_signature);
      expect(tr.signature).toBe(tr.tx_signature);
      expect(tr.treasury_index).toBe(tr.protocol_treasury_index);
      expect(BigInt(tr.fee_protocol) + BigInt(tr.fee_creator) + BigInt(tr.fee_referral)).toBe(BigInt(tr.taker_fee));
    }
    expect((await get(v1('/trades'))).body.trades).toHaveLength(100);
    expect((await get(v1('/trades?limit=500'))).body.trades.length).toBeLessThanOrEqual(500);
    expectError(await get(v1('/trades?limit=501')), 400, 'INVALID_PARAMETER');
  });

  it('serves /config unwrapped with the newest tick size and fee curve, also at the deprecated root alias', async () => {
    const r = await get(v1('/config'));
    expect(r.status).toBe(200);
    const tick = await suite.db.oneOrNone('SELECT tick_size_bps FROM tick_size_history ORDER BY slot DESC, event_index DESC LIMIT 1');
    const fee = await suite.db.oneOrNone('SELECT fee_cap_bps, decay_rate_bps FROM fee_config_history ORDER BY slot DESC, event_index DESC LIMIT 1');
    expect(tick).not.toBeNull(); // the simulated chain changes the tick size: the default is not what is shown
    expect(r.body).toEqual({
      programId: PROGRAM_ID,
      chainId: 'solana-mainnet',
      tickSizeBps: tick.tick_size_bps,
      feeConfig: fee ? { feeCapBps: fee.fee_cap_bps, decayRateBps: fee.decay_rate_bps } : { feeCapBps: 200, decayRateBps: 600 },
    });
    const alias = await get(`${url}/config`);
    expect(alias.body).toEqual(r.body);
    expect(alias.headers.get('deprecation')).toBe('true');
    expect(alias.headers.get('x-ratelimit-limit')).toBe('300');
    expectError(await get(v1('/config?x=1')), 400, 'INVALID_PARAMETER');
  });

  it('serves the fee config: 25 rows newest first, current, and split invariants', async () => {
    const r = await get(v1('/v2/fee-config'));
    expect(r.status).toBe(200);
    const rows = await suite.db.any('SELECT * FROM fee_config_history ORDER BY slot DESC, event_index DESC');
    expect(r.body.history).toHaveLength(Math.min(25, rows.length));
    expect(r.body.current).toEqual(r.body.history[0] ?? null);
    const times = r.body.history.map((h: Json) => h.changed_at);
    expect(times).toEqual([...times].sort().reverse());
    const invalid = rows.filter((x) => x.protocol_share_bps + x.creator_share_bps + x.referral_share_bps !== 10_000).length;
    expect(r.body.invariants).toEqual({ feeSplitValid: invalid === 0, invalidFeeSplitRows: invalid });
  });

  it('serves the top of book of the most recent market, or of the one asked for', async () => {
    const recent = await suite.db.one('SELECT address, best_bid, best_ask FROM markets ORDER BY market_id DESC, id DESC LIMIT 1');
    expect((await get(v1('/orderbook/top'))).body).toEqual({ best_bid: recent.best_bid, best_ask: recent.best_ask, market: recent.address });
    expectError(await get(v1('/orderbook/top?market=11111111111111111111111111111111')), 404, 'NOT_FOUND');
  });

  it('answers deprecated aliases with the canonical headers', async () => {
    const alias = await get(`${url}/orderbook/top`);
    expect(alias.status).toBe(200);
    expect(alias.res.headers.get('deprecation')).toBe('true');
    expect(alias.res.headers.get('link')).toBe('</api/v1/orderbook/top>; rel=canonical');
    expect(alias.res.headers.get('x-service-canonical-path')).toBe('/api/v1/orderbook/top');
    const legacy = await get(`${url}/api/markets?limit=2`);
    expect(legacy.status).toBe(200);
    expect(legacy.res.headers.get('deprecation')).toBe('true');
    expect(legacy.body.data.markets).toHaveLength(2);
    const status = await get(`${url}/status`);
    expect(status.res.headers.get('deprecation')).toBe('true');
    expect(status.body.data).toEqual({
      status: expect.stringMatching(/^(healthy|degraded|unhealthy)$/), synced: expect.any(Boolean), slotLag: expect.any(Number),
      lastProcessedSlot: '1500', lastActivityAt: expect.any(String), indexerRunning: expect.any(Boolean),
    });
    expect((await get(v1('/markets'))).res.headers.get('deprecation')).toBeNull();
  });

  it('gives 404 for unknown paths, 405 with Allow for a known path, and request ids', async () => {
    expectError(await get(v1('/nope')), 404, 'NOT_FOUND');
    // The root alias of a POST-only route (issue 22): 405, allowing POST.
    const txGet = await get(`${url}/tx/place-order`);
    expectError(txGet, 405, 'METHOD_NOT_ALLOWED');
    expect(txGet.res.headers.get('allow')).toBe('POST');
    const post = await get(v1('/markets'), { method: 'POST' });
    expectError(post, 405, 'METHOD_NOT_ALLOWED');
    expect(post.res.headers.get('allow')).toBe('GET, HEAD');
    expectError(await get(`${url}/health`, { method: 'DELETE' }), 405, 'METHOD_NOT_ALLOWED');
    const echoed = await get(v1('/markets/current'), { headers: { 'x-request-id': 'client-abc.1' } });
    expect(echoed.res.headers.get('x-request-id')).toBe('client-abc.1');
    const generated = await get(v1('/markets/current'), { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves health, readiness and metrics by route template', async () => {
    const h = await get(`${url}/health`);
    expect(h.body).toMatchObject({ dbConnected: true, lastProcessedSlot: '1500' });
    expect(h.body.checks.map((c: Json) => c.name)).toEqual(['database', 'rpc', 'indexer', 'slot_lag']);
    expect((await get(`${url}/ready`)).body).toMatchObject({ ready: true, dbConnected: true });
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toMatch(/service_api_requests_total\{method="GET",route="\/api\/v1\/markets\/:marketId",status="200"\} \d+/);
    expect(text).not.toMatch(/route="\/api\/v1\/markets\/[1-9A-HJ-NP-Za-km-z]{32,}"/);
  });

  it('never answers hostile input with a 5xx, a stack or SQL', async () => {
    const hostile = fc.oneof(
      fc.string(),
      fc.constantFrom("' OR 1=1 --", '%00', '../../etc/passwd', '١٢٣', '9'.repeat(400), '-1', '1e309', 'NaN', '[]', '{}', '%F0%9F%92%A9'),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/markets?limit=', '/markets?state=', '/markets?offset=', '/markets/', '/trades?tx=', '/orderbook/top?market=', '/markets/current?x='), hostile, async (path, value) => {
        const r = await fetch(v1(path + encodeURIComponent(value)));
        expect(r.status).toBeLessThan(500);
        const text = await r.text();
        expect(text).not.toMatch(/at \w+ \(|node_modules|SELECT |syntax error/);
      }),
      { numRuns: 300 },
    );
  });
});

describe('REST statement timeout (real PostgreSQL)', () => {
  const servers = createApiServers();
  it('has PostgreSQL cancel the query of a request that timed out, and the connection serves again', async () => {
    const tdb = await createTestDatabase();
    const app = 'market-indexer-api-timeout-test';
    // As the API process opens it: statement_timeout equal to the request timeout.
    const database = createDatabase({ url: tdb.url, poolMax: 1, applicationName: app, statementTimeoutMs: 300 });
    const admin = createDatabase({ url: tdb.url, poolMax: 2 });
    const common = testCommon({ REQUEST_TIMEOUT_MS: '300' });
    const api = await servers.startInMemory(common, database.db, { hotTtlMs: 0 });
    const blocker = await admin.db.$pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE markets IN ACCESS EXCLUSIVE MODE');
      expectError(await get(`${api}/api/v1/markets/current`), 504, 'TIMEOUT');
      // Still locked, yet the query is gone: PostgreSQL cancelled it rather than let it wait.
      // Read outside the blocker's transaction: pg_stat_activity keeps its first snapshot for
      // the rest of a transaction.
      const waiting = async () =>
        (await admin.db.one<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", [app])).n;
      await waitFor('the timed-out query to be cancelled', async () => (await waiting()) === 0, 10_000);
      // PostgreSQL's cancellation alone (57014) is answered like the handler timer: here the
      // timer is a minute away, so only the statement timeout can end the request.
      const patient = testCommon({ REQUEST_TIMEOUT_MS: '60000' });
      const api2 = await servers.startInMemory(patient, database.db, { hotTtlMs: 0 });
      const r = await get(`${api2}/api/v1/markets?offset=7`);
      expectError(r, 504, 'TIMEOUT');
      expect(r.body.error).toBe('Request took longer than 60 seconds');
      await blocker.query('ROLLBACK');
      // The pool's only connection was not left behind.
      expect((await get(`${api}/api/v1/markets`)).status).toBe(200);
    } finally {
      blocker.release();
      await servers.closeAll();
      await database.close();
      await admin.close();
      await tdb.drop();
    }
  });
});

describe('REST errors when PostgreSQL is away', () => {
  const servers = createApiServers();
  it('maps an unreachable database to 503 SERVICE_UNAVAILABLE and a hung one to 504 TIMEOUT', async () => {
    // Nothing listens on port 1; the second "database" accepts connections and never answers.
    const accepted = new Set<net.Socket>();
    const hang = net.createServer((socket) => void accepted.add(socket));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const down = createDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolMax: 1 });
    const hung = createDatabase({ url: `postgres://postgres@127.0.0.1:${(hang.address() as net.AddressInfo).port}/none`, poolMax: 1 });
    const ca = testCommon();
    const cb = testCommon({ REQUEST_TIMEOUT_MS: '300' });
    const a = await servers.startInMemory(ca, down.db);
    const b = await servers.startInMemory(cb, hung.db);
    try {
      const r = await get(`${a}/api/v1/markets`);
      expectError(r, 503, 'SERVICE_UNAVAILABLE');
      expect(JSON.stringify(r.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      // Liveness does not depend on the database (D-101): degraded, and not ready.
      const h = await get(`${a}/health`);
      expect(h.status).toBe(200);
      expect(h.body).toMatchObject({ status: 'degraded', dbConnected: false });
      expect(h.body.checks).toContainEqual({ name: 'database', status: 'warn', message: 'database unreachable' });
      expect((await get(`${a}/ready`)).status).toBe(503);
      expectError(await get(`${b}/api/v1/markets/current`), 504, 'TIMEOUT');
    } finally {
      await servers.closeAll();
      // The hung pool's connection ends only when its peer goes: cut it, then close both pools,
      // so no socket outlives the suite (Jest's worker would be force-exited).
      for (const socket of accepted) socket.destroy();
      await new Promise((r) => hang.close(r));
      await Promise.all([down.close(), hung.close()]);
    }
  });
});
