import { createDatabase, type Database } from '../../core/db';
import { buildTransaction, type ProgramEvent } from '../../core/events';
import { createApp } from '../../server/app';
import { createApiStores } from '../../server/stores';
import { COMPUTED_STATS_CAP } from '../../server/routes/stats';
import { addressOf, keyPairOf, signatureOf } from '../../simulator/ids';
import { call, serve, walletHeaders } from '../support/api';
import { testCommon } from '../support/common';
import { PROGRAM_ID, projectionDb, type ProjectionDb } from '../support/indexer';
import { createTestDatabase } from '../support/pg';

describe('REST edge cases', () => {
  let p: ProjectionDb;
  let db: Database['db'];
  let api: { url: string; close(): Promise<void> };
  const common = testCommon({ RATE_LIMIT_MAX_REQUESTS: '100000', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000', RATE_LIMIT_SENSITIVE_MAX: '100000' });

  beforeAll(async () => {
    p = await projectionDb();
    db = p.database.db;
    api = await serve(createApp({ common, db, ...createApiStores(common, undefined) }));
  });
  afterAll(async () => {
    await api.close();
    await p.close();
  });

  it('reports a reachable database without the schema as not ready (503), never a 500', async () => {
    const bare = await createTestDatabase({ migrated: false });
    const database = createDatabase({ url: bare.url, poolMax: 2 });
    const c = testCommon();
    const bareApi = await serve(createApp({ common: c, db: database.db, ...createApiStores(c, undefined) }));
    try {
      const ready = await call(`${bareApi.url}/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ready: false, dbConnected: false });
      // Liveness: a restart would not mend it (D-101).
      const health = await call(`${bareApi.url}/health`);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'degraded', dbConnected: false });
    } finally {
      await bareApi.close();
      await database.close();
      await bare.drop();
    }
  });

  it('stays live while its indexer is down: /health 200 degraded, the indexer check a warning (D-67)', async () => {
    // No indexer has ever written a heartbeat to this database.
    const health = await call(`${api.url}/health`);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', dbConnected: true, indexerRunning: false });
    expect(health.body.checks).toContainEqual({ name: 'indexer', status: 'warn', message: 'indexer not running' });
    expect((await call(`${api.url}/ready`)).status).toBe(200);
    expect((await call(`${api.url}/api/v1/status`)).body.data).toMatchObject({ status: 'degraded', synced: false, indexerRunning: false });
  });

  it('answers /orderbook/top without markets with two nulls and no market', async () => {
    const r = await call(`${api.url}/api/v1/orderbook/top`);
    expect(r.body).toEqual({ best_bid: null, best_ask: null });
    expect((await call(`${api.url}/api/v1/markets/current`)).status).toBe(404);
    const fee = await call(`${api.url}/api/v1/v2/fee-config`);
    expect(fee.body).toEqual({ current: null, history: [], invariants: { feeSplitValid: true, invalidFeeSplitRows: 0 } });
  });

  it('keeps 25 fee-config rows, newest first, and counts every invalid split', async () => {
    const admin = addressOf('admin');
    // 30 changes through the indexer's own projector; every 7th split does not add up.
    const txs = Array.from({ length: 30 }, (_, i) => {
      const ev: ProgramEvent = {
        kind: 'FeeConfigChanged',
        data: { feeCapBps: 100 + i, decayRateBps: 500, protocolShareBps: 7000 - (i % 7 === 0 ? 1 : 0), creatorShareBps: 2000, referralShareBps: 1000 },
      };
      return buildTransaction({ programId: PROGRAM_ID, signature: signatureOf(`fee:${i}`), slot: 100 + i, blockTime: 1_767_300_000 + i, signer: admin, eventAuthority: admin, instructionName: 'SetFeeConfig', events: [ev] });
    });
    await p.apply(txs);
    const r = await call(`${api.url}/api/v1/v2/fee-config`);
    expect(r.body.history).toHaveLength(25);
    expect(r.body.history.map((h: { fee_cap_bps: number }) => h.fee_cap_bps)).toEqual(Array.from({ length: 25 }, (_, i) => 129 - i));
    expect(r.body.current.fee_cap_bps).toBe(129);
    expect(r.body.invariants).toEqual({ feeSplitValid: false, invalidFeeSplitRows: 5 });
  });

  it('caps computed personal stats at the newest 10,000 settled trades', async () => {
    const w = keyPairOf('cap-wallet');
    const market = addressOf('cap-market');
    // Hand-written rows on purpose: 10,050 settlements through the simulator would take minutes.
    await db.none(
      `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, created_at, updated_at, created_slot, created_signature)
       SELECT 9000000 + g, $1 || g, g, 'mint', 4, to_timestamp(0), to_timestamp(60), now(), now(), 1, 's' FROM generate_series(1, 10050) g`,
      [market],
    );
    await db.none(
      `INSERT INTO settled_trades (id, wallet, market_address, market_id, side, shares, cost, payout, pnl, is_win, market_outcome, settled_at, t_start, t_end, slot, tx_signature)
       SELECT 9000000 + g, $1, $2 || g, g, CASE WHEN g % 2 = 0 THEN 'yes' ELSE 'no' END, 10, 5, CASE WHEN g <= 50 THEN 0 ELSE 10 END,
              CASE WHEN g <= 50 THEN -5 ELSE 5 END, g > 50, 1, to_timestamp(1000 + g), to_timestamp(0), to_timestamp(60), g, 's' || g
         FROM generate_series(1, 10050) g`,
      [w.address, market],
    );
    const r = await call(`${api.url}/api/v1/stats`, { headers: walletHeaders(w, 'GET /stats') });
    expect(r.status).toBe(200);
    // The 50 oldest (the only losses) fall outside the cap.
    expect(r.body.data).toMatchObject({ totalTrades: COMPUTED_STATS_CAP, winningTrades: COMPUTED_STATS_CAP, losingTrades: 0, totalPnl: String(5 * COMPUTED_STATS_CAP), winRate: 100, longestStreak: COMPUTED_STATS_CAP });
  });

  it('refuses the third authenticated request with 429 (authenticated tier = 2x public)', async () => {
    const low = testCommon({ RATE_LIMIT_MAX_REQUESTS: '1' });
    const lowApi = await serve(createApp({ common: low, db, ...createApiStores(low, undefined) }));
    const w = keyPairOf('tier-wallet');
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(`${lowApi.url}/api/v1/achievements`, { headers: walletHeaders(w, 'GET /achievements') })).status);
    await lowApi.close();
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('answers oversized and malformed auth headers with 401, never 5xx', async () => {
    const w = keyPairOf('header-wallet');
    const big = { ...walletHeaders(w, 'GET /positions'), 'x-wallet-message': 'x'.repeat(6000) };
    const r1 = await call(`${api.url}/api/v1/positions`, { headers: big });
    expect(r1.status).toBe(401);
    const r2 = await call(`${api.url}/api/v1/positions`, { headers: { ...walletHeaders(w, 'GET /positions'), 'x-wallet-pubkey': '0'.repeat(44) } });
    expect([r2.status, r2.body.code]).toEqual([401, 'UNAUTHORIZED']);
    const huge = await fetch(`${api.url}/api/v1/markets`, { headers: { 'x-pad': 'y'.repeat(70_000) } });
    expect(huge.status).toBe(431);
  });
});
