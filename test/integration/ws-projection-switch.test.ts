import type http from 'node:http';
import type { Express } from 'express';
import { createDatabase, type Database } from '../../core/db';
import { followLiveSchema, switchLiveSchema, type LiveSchemaFollower } from '../../core/db/live-projection';
import { createProjectionSchema, LIVE_SCHEMA, projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import type { Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog, type UpdateLog } from '../../core/redis/updates';
import type { HotCache } from '../../server/read/hot-cache';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { CLOSE, PROJECTION_SWITCHED_REASON } from '../../server/ws/protocol';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';

/**
 * A switch of the live projection schema as an API process sees it (D-410), with real
 * PostgreSQL and Redis: the follower hears the pointer change, the hot reads are dropped, every
 * `/ws` client is closed with 4010, and a client that subscribes again gets the new schema's
 * sequence, its old seq answered as not resumable.
 */
describe('/ws at a switch of the live projection schema', () => {
  let tdb: TestDatabase;
  let database: Database;
  let follower: LiveSchemaFollower;
  let redis: Redis;
  let writer: UpdateLog;
  let api: { port: number; server: http.Server; close(): Promise<void> };
  const built = projectionSchema(PROJECTION_VERSION);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    await createProjectionSchema(database.db, PROJECTION_VERSION);
    const tenant = testTenant();
    redis = connectRedis();
    writer = createRedisUpdateLog({ redis, keys: createKeys(tenant) });
    // The API process's wiring (server/run.ts): the follower's switch resets the server.
    const common = testCommon({ TENANT_ID: tenant, API_PORT: '0', API_HOST: '127.0.0.1' });
    let switched = () => {};
    follower = followLiveSchema({ db: database.db, databaseUrl: tdb.url, onSwitch: () => switched(), retryMs: 50 });
    const apiRedis = connectRedis();
    common.shutdown.add('redis', async () => apiRedis.disconnect());
    const live = createLiveStores(common, apiRedis, undefined, follower.current);
    common.shutdown.add('live', () => live.close());
    const started = await startApiServer({ common, db: database.db, redis: apiRedis, live, busCarriesIndexer: true, liveSchemaRead: follower.ready, liveSchema: follower.current });
    switched = started.projectionSwitched;
    api = { port: started.port, server: started.server, close: () => common.shutdown.run('test over') };
    await waitFor('the pointer read', async () => follower.ready());
  });
  afterAll(async () => {
    await api.close();
    await follower.close();
    redis.disconnect();
    await database.close();
    await tdb.drop();
  });

  const book = (slot: number, schema: string) => writer.append([{ channel: 'orderbook:3', slot, data: { marketId: '3', bestBid: slot, bestAsk: 9000 } }], undefined, schema);
  const hotCache = () => ((api.server.listeners('request')[0] as Express).locals.hotCache as HotCache);

  it('drops the hot reads, closes every client with 4010, and serves the new schema\'s sequence to a client that subscribes again', async () => {
    const url = `ws://127.0.0.1:${api.port}/ws`;
    const c = await WsClient.open(url);
    await c.next((m) => m.type === 'connected');
    expect(await c.request({ type: 'subscribe', channel: 'orderbook:3' })).toEqual({ type: 'subscribed', channel: 'orderbook:3' });
    for (let slot = 1; slot <= 3; slot++) await book(slot, LIVE_SCHEMA);
    await book(50, built); // the builder's own sequence, not delivered while public is live
    await book(4, LIVE_SCHEMA);
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) seen.push((await c.next((m) => m.type === 'update')).slot as number);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect((await c.request({ type: 'subscribe', channel: 'orderbook:9' })).type).toBe('subscribed');

    expect((await fetch(`http://127.0.0.1:${api.port}/api/v1/markets`)).status).toBe(200);
    expect(hotCache().size()).toBeGreaterThan(0);

    await switchLiveSchema(database.db, built);
    expect(await c.closed).toEqual({ code: CLOSE.projectionSwitched, reason: PROJECTION_SWITCHED_REASON });
    expect(follower.current()).toBe(built);
    expect(hotCache().size()).toBe(0);
    c.assertValid();

    // The old writer goes on after the switch: its updates reach nobody.
    await book(5, LIVE_SCHEMA);
    await book(51, built);
    const again = await WsClient.open(url);
    await again.next((m) => m.type === 'connected');
    // seq 4 was public's: on the new schema's sequence (latest 2) it cannot be resumed.
    expect(await again.request({ type: 'subscribe', channel: 'orderbook:3', resumeFrom: 4 })).toMatchObject({ type: 'subscribed', channel: 'orderbook:3', resumed: false, latestSeq: 2 });
    expect(await again.request({ type: 'unsubscribe', channel: 'orderbook:3' })).toMatchObject({ type: 'unsubscribed' });
    expect(await again.request({ type: 'subscribe', channel: 'orderbook:3', resumeFrom: 1 })).toMatchObject({ type: 'subscribed', resumed: true, replayed: 1, latestSeq: 2 });
    expect(await again.next((m) => m.type === 'update')).toMatchObject({ channel: 'orderbook:3', seq: 2, slot: 51 });
    await book(6, LIVE_SCHEMA);
    await book(52, built);
    expect(await again.next((m) => m.type === 'update')).toMatchObject({ channel: 'orderbook:3', seq: 3, slot: 52 });
    expect(again.received.filter((m) => m.type === 'update').map((m) => m.slot)).toEqual([51, 52]);
    again.assertValid();
    await again.close();
  });
});
