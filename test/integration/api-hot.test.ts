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

  it('tags hot reads with an ETag derived from the body and answers a current If-None-Match with 304', async () => {
    const p = await projectionDb();
    const common = testCommon({});
    const app = createApp({ common, db: p.database.db, hotTtlMs: 3_600_000, ...createApiStores(common, undefined) });
    // A second replica: it must give the same body the same tag.
    const other = createApp({ common, db: p.database.db, hotTtlMs: 3_600_000, ...createApiStores(common, undefined) });
    const [api, replica] = [await serve(app), await serve(other)];
    try {
      await p.apply(simulate(200, { seed: 1212 }).txs);
      const url = `${api.url}/api/v1/markets/current`;
      const first = await call(url);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"[\w-]{27}"$/);
      expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
      // HEAD: the same headers, no body (the cached body is written without Express's send).
      const head = await fetch(url, { method: 'HEAD' });
      expect([head.status, head.headers.get('etag'), head.headers.get('content-length')]).toEqual([200, etag, first.headers.get('content-length')]);
      expect((await head.arrayBuffer()).byteLength).toBe(0);
      const notModified = await call(url, { headers: { 'if-none-match': etag } });
      expect(notModified.status).toBe(304);
      expect(notModified.body).toBeUndefined();
      expect(notModified.headers.get('etag')).toBe(etag);
      // Still counted against the caller's quota, and still correlated.
      expect(notModified.headers.get('x-ratelimit-remaining')).not.toBeNull();
      expect(notModified.headers.get('x-request-id')).not.toBeNull();
      expect((await call(url, { headers: { 'if-none-match': `"other", ${etag}` } })).status).toBe(304);
      expect((await call(url, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
      expect((await call(`${replica.url}/api/v1/markets/current`, { headers: { 'if-none-match': etag } })).status).toBe(304);
      // A deprecated alias is the same resource, with the same tag.
      const topTag = (await call(`${api.url}/api/v1/orderbook/top`)).headers.get('etag')!;
      const viaAlias = await call(`${api.url}/orderbook/top`, { headers: { 'if-none-match': topTag } });
      expect(viaAlias.status).toBe(304);
      expect(viaAlias.headers.get('deprecation')).toBe('true');

      // Once the indexer's change reaches the cache, the old tag no longer matches.
      const { marketId } = first.body.data.market;
      await p.database.db.none('UPDATE markets SET total_trades = total_trades + 1 WHERE market_id = $1', [marketId]);
      (app.locals.hotCache as HotCache).invalidate();
      const changed = await call(url, { headers: { 'if-none-match': etag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      expect(changed.body.data.market.totalTrades).toBe(first.body.data.market.totalTrades + 1);
      // Reads that are not served from memory carry no tag.
      expect((await call(`${api.url}/api/v1/trades`)).headers.get('etag')).toBeNull();
    } finally {
      await api.close();
      await replica.close();
      await p.close();
    }
  });
});
