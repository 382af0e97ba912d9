import { createKeys } from '../../core/redis/keys';
import { createRedisBus } from '../../core/redis/bus';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { createApp } from '../../server/app';
import type { HotCache } from '../../server/read/hot-cache';
import { createApiStores } from '../../server/stores';
import { call, serve } from '../support/api';
import { testCommon } from '../support/common';
import { projectionDb, simulate } from '../support/indexer';
import { connectRedis, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';

describe('hot reads refreshed by the indexer bus (real Redis)', () => {
  it('serves from memory until a market message arrives from another process', async () => {
    const p = await projectionDb();
    const tenant = testTenant();
    const [apiRedis, indexerRedis] = [connectRedis(), connectRedis()];
    const apiBus = createRedisBus({ redis: apiRedis, keys: createKeys(tenant) });
    const indexerUpdates = createRedisUpdateLog({ redis: indexerRedis, keys: createKeys(tenant) });
    const common = testCommon({ TENANT_ID: tenant });
    const app = createApp({ common, db: p.database.db, bus: apiBus, hotTtlMs: 3_600_000, ...createApiStores(common, undefined) });
    const api = await serve(app);
    try {
      await p.apply(simulate(200, { seed: 1212 }).txs);
      const first = await call(`${api.url}/api/v1/markets/current`);
      const { marketId, totalTrades } = first.body.data.market;
      const checks = async () => (await call(`${api.url}/api/v1/v2/referrals/diagnostics`)).body.data.checks;
      expect((await checks()).creditsMatchTradeFees).toBe(true);
      // A write without a publish (as mid-batch) is not visible: the answer comes from memory.
      await p.database.db.none('UPDATE markets SET total_trades = total_trades + 1000 WHERE market_id = $1', [marketId]);
      await p.database.db.none('UPDATE trades SET fee_referral = fee_referral + 1, fee_protocol = fee_protocol - 1 WHERE id = (SELECT min(id) FROM trades WHERE fee_protocol > 0)');
      expect((await call(`${api.url}/api/v1/markets/current`)).body.data.market.totalTrades).toBe(totalTrades);
      expect((await checks()).creditsMatchTradeFees).toBe(true);
      const hot = app.locals.hotCache as HotCache;
      expect(hot.size()).toBeGreaterThan(0);
      await indexerUpdates.append([{ channel: `market:${marketId}`, slot: 1, data: { marketId, field: 'totalTrades', value: totalTrades + 1000 } }]);
      await waitFor('cache invalidated', async () => hot.size() === 0);
      expect((await call(`${api.url}/api/v1/markets/current`)).body.data.market.totalTrades).toBe(totalTrades + 1000);
      expect((await checks()).creditsMatchTradeFees).toBe(false);
    } finally {
      await api.close();
      await apiBus.close();
      apiRedis.disconnect();
      indexerRedis.disconnect();
      await p.close();
    }
  });
});
