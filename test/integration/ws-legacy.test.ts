import { createApiKeyStore } from '../../core/api-keys';
import { createDatabase, type Database } from '../../core/db';
import { planOf } from '../../core/plans';
import { redisReady, type Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';
import { refusedUpgrade, WsClient } from '../support/ws';

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
    const c = await WsClient.open(url);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    urls = [await replica(), await replica()];
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const stop of stops) await stop();
    for (const r of redisClients) r.disconnect();
    await database.close();
    await tdb.drop();
  });

  it('without a key: Free, 2 connections per IP across the replicas', async () => {
    expect(planOf('free').wsConnections).toBe(2);
    await open(urls[0]!);
    await open(urls[1]!);
    const third = await refusedUpgrade(urls[0]!);
    expect(third.status).toBe(429);
  });

  it("with a key: its plan's connections, the key's count whatever the IP; a bad key is 401", async () => {
    const { key } = await createApiKeyStore(database.db).create({ tenant, plan: 'basic' });
    const n = planOf('basic').wsConnections;
    for (let i = 0; i < n; i++) await open(`${urls[i % 2]!}?apiKey=${encodeURIComponent(key)}`);
    expect((await refusedUpgrade(`${urls[1]!}?apiKey=${encodeURIComponent(key)}`)).status).toBe(429);
    expect((await refusedUpgrade(`${urls[0]!}?apiKey=mik_000000000000_bad`)).status).toBe(401);
  });

  it('subscribes with { channel: "market.update", marketId } and receives that market\u2019s updates, sequenced', async () => {
    const { key } = await createApiKeyStore(database.db).create({ tenant, plan: 'pro' });
    const c = await open(`${urls[0]!}?apiKey=${encodeURIComponent(key)}`);
    await c.next((m) => m.type === 'connected');
    c.send(JSON.stringify({ type: 'subscribe', channel: 'market.update', marketId: 4242 }));
    expect(await c.next((m) => m.type !== 'update')).toMatchObject({ type: 'subscribed', channel: 'market:4242' });
    const indexer = createRedisUpdateLog({ redis: redisClients[0]!, keys: createKeys(tenant) });
    await indexer.append([{ channel: 'market:4242', slot: 7, data: { marketId: '4242', field: 'state', value: 2 } }]);
    const update = await c.next((m) => m.type === 'update');
    expect(update).toMatchObject({ channel: 'market:4242', slot: 7, data: { marketId: '4242', field: 'state', value: 2 } });
    expect(typeof update.seq).toBe('number');
    c.send(JSON.stringify({ type: 'subscribe', channel: 'market.update', marketId: 'not-a-number' }));
    expect((await c.next((m) => m.type === 'error')).message).toMatch(/Invalid channel/);
  });
});
