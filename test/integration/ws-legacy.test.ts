import { createApiKeyStore } from '../../core/api-keys';
import { createDatabase, type Database } from '../../core/db';
import { planOf } from '../../core/plans';
import { redisReady, type Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { testCommon } from '../support/common';
import { insertMarkets } from '../support/markets';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';
import { ASYNCAPI_LEGACY_PATH, assertMatchesLegacyAsyncApi, asyncApiSchemaCheck, refusedUpgrade, WsClient } from '../support/ws';

// Every frame received (and every object sent) is checked against api-reference/asyncapi-legacy.yaml,
// and every refused upgrade's body against its UpgradeRefusal schema.
const assertRefusal = asyncApiSchemaCheck(ASYNCAPI_LEGACY_PATH, 'UpgradeRefusal');
async function refused(url: string) {
  const r = await refusedUpgrade(url);
  assertRefusal(r.body);
  return r;
}

describe('/ws in the appendix variant: plan connection limits across replicas, its subscribe form (real Redis)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const redisClients: Redis[] = [];
  const stops: (() => Promise<void>)[] = [];
  const clients: WsClient[] = [];
  const tenant = testTenant();
  let urls: string[] = [];

  async function replica(): Promise<string> {
    const common = testCommon({ TENANT_ID: tenant, API_PORT: '0', API_HOST: '127.0.0.1', API_VARIANT: 'legacy' });
    const redis = connectRedis();
    await redisReady(redis, 5_000);
    redisClients.push(redis);
    const live = createLiveStores(common, redis);
    common.shutdown.add('live', () => live.close());
    const { port } = await startApiServer({ common, db: database.db, redis, live, busCarriesIndexer: true, docs: false });
    stops.push(() => common.shutdown.run('test over'));
    return `ws://127.0.0.1:${port}/ws`;
  }
  const open = async (url: string) => {
    const c = await WsClient.open(url, {}, assertMatchesLegacyAsyncApi);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    await insertMarkets(database.db, [4242, 4243]);
    urls = [await replica(), await replica()];
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const stop of stops) await stop();
    for (const r of redisClients) r.disconnect();
    await database.close();
    await tdb.drop();
  });

  /** A series of the replica's /metrics, as Prometheus scrapes it. */
  const scraped = async (wsUrl: string, series: string) => {
    const text = await (await fetch(wsUrl.replace(/^ws:/, 'http:').replace(/\/ws$/, '/metrics'))).text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `) || l.startsWith(`${series.slice(0, -1)},`));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };

  it('without a key: Free, 2 connections per IP across the replicas; /metrics shows them and the refusal by plan', async () => {
    expect(planOf('free').wsConnections).toBe(2);
    expect(await scraped(urls[0]!, 'service_plan_ws_connections{plan="free"}')).toBe(0);
    expect(await scraped(urls[0]!, 'service_plan_limit_refusals_total{plan="free",limit="ws_connections"}')).toBe(0);
    await open(urls[0]!);
    await open(urls[1]!);
    expect(await scraped(urls[0]!, 'service_plan_ws_connections{plan="free"}')).toBe(1);
    expect(await scraped(urls[1]!, 'service_plan_ws_connections{plan="free"}')).toBe(1);
    const third = await refused(urls[0]!);
    expect(await scraped(urls[0]!, 'service_plan_limit_refusals_total{plan="free",limit="ws_connections"}')).toBe(1);
    expect(await scraped(urls[1]!, 'service_plan_limit_refusals_total{plan="free",limit="ws_connections"}')).toBe(0);
    expect(third.status).toBe(429);
    // The variant's error envelope, not v1's (D-160).
    expect(third.body).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: 'Too many WebSocket connections for this plan' }, timestamp: expect.any(Number) });
    expect(third.headers['retry-after']).toBe('10');
  });

  it("with a key: its plan's connections, the key's count whatever the IP; a bad key is 401", async () => {
    const { key } = await createApiKeyStore(database.db).create({ tenant, plan: 'basic' });
    const n = planOf('basic').wsConnections;
    for (let i = 0; i < n; i++) await open(`${urls[i % 2]!}?apiKey=${encodeURIComponent(key)}`);
    expect((await refused(`${urls[1]!}?apiKey=${encodeURIComponent(key)}`)).status).toBe(429);
    const bad = await refused(`${urls[0]!}?apiKey=mik_000000000000_bad`);
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ success: false, error: { code: 'INVALID_API_KEY' } });
  });

  it('refuses an upgrade on another path with the variant\'s NOT_FOUND', async () => {
    const r = await refused(urls[0]!.replace(/\/ws$/, '/stream'));
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });

  it('subscribes with { channel: "market.update", marketId } and receives that market\u2019s updates, sequenced', async () => {
    const { key } = await createApiKeyStore(database.db).create({ tenant, plan: 'pro' });
    const c = await open(`${urls[0]!}?apiKey=${encodeURIComponent(key)}`);
    await c.next((m) => m.type === 'connected');
    c.send({ type: 'subscribe', channel: 'market.update', marketId: 4242 });
    expect(await c.next((m) => m.type !== 'update')).toMatchObject({ type: 'subscribed', channel: 'market:4242' });
    const indexer = createRedisUpdateLog({ redis: redisClients[0]!, keys: createKeys(tenant) });
    await indexer.append([{ channel: 'market:4242', slot: 7, data: { marketId: '4242', field: 'state', value: 2 } }]);
    const update = await c.next((m) => m.type === 'update');
    expect(update).toMatchObject({ channel: 'market:4242', slot: 7, data: { marketId: '4242', field: 'state', value: 2 } });
    expect(typeof update.seq).toBe('number');
    c.send({ type: 'subscribe', channel: 'market.update', marketId: '4243' });
    expect(await c.next((m) => m.type !== 'update')).toMatchObject({ type: 'subscribed', channel: 'market:4243' });
    c.send({ type: 'unsubscribe', channel: 'market.update', marketId: '4242' });
    expect(await c.next((m) => m.type !== 'update')).toMatchObject({ type: 'unsubscribed', channel: 'market:4242' });
    // One batch, published in order: once 4243's update is here, 4242's would have been too.
    await indexer.append([
      { channel: 'market:4242', slot: 8, data: { marketId: '4242', field: 'state', value: 3 } },
      { channel: 'market:4243', slot: 8, data: { marketId: '4243', field: 'state', value: 3 } },
    ]);
    expect(await c.next((m) => m.type === 'update')).toMatchObject({ channel: 'market:4243', slot: 8 });
    expect(c.received.filter((m) => m.type === 'update' && m.channel === 'market:4242' && m.slot === 8)).toEqual([]);
    // Not a documented form: sent as text, so the client-side check does not stop it.
    c.send(JSON.stringify({ type: 'subscribe', channel: 'market.update', marketId: 'not-a-number' }));
    expect((await c.next((m) => m.type === 'error')).message).toBe('Invalid marketId: expected a market epoch id');
    // v1's channel names are not the variant's (D-162): no v1-only frame reaches a legacy client.
    c.send(JSON.stringify({ type: 'subscribe', channel: 'orderbook:4242' }));
    expect((await c.next((m) => m.type === 'error')).message).toBe('Invalid channel: orderbook:4242. Expected market.update with a marketId');
    // A marketId the store has not indexed says so, as on v1 (D-352).
    c.send({ type: 'subscribe', channel: 'market.update', marketId: 9 });
    expect((await c.next((m) => m.type === 'error')).message).toBe('Unknown market: 9. A channel takes the marketId of a market GET /api/v1/markets lists');
    c.assertValid();
  });
});
