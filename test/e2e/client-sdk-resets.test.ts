import type { Common } from '../../core/common';
import { createDatabase, type Database } from '../../core/db';
import type { Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog, type UpdateLog } from '../../core/redis/updates';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { createMarketClient, generateSigner, type LiveEvent } from '../../client/src';
import { createNodeSocket } from '../../client/src/node';
import { HIGH_LIMITS } from '../support/api';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { startFreezableProxy } from '../support/tcp-proxy';

/**
 * The SDK's kept book through each way the stream can lose updates (D-526, D-527, D-534),
 * against the API server with real Redis and PostgreSQL: a seq that jumps (a number the log
 * took but never published), a resume from further back than the log keeps (the server answers
 * `resumed: false`), and the server's 4010 close at a projection switch. Each must end in a new
 * REST snapshot and the live updates after it; a plain reconnect must not.
 */
describe('the SDK starts over from a REST snapshot when the stream cannot be resumed', () => {
  let tdb: TestDatabase;
  let database: Database;
  let redis: Redis;
  let log: UpdateLog;
  let common: Common;
  let api: Awaited<ReturnType<typeof startApiServer>>;
  let proxy: Awaited<ReturnType<typeof startFreezableProxy>>;
  let tenant: string;
  let market: string;
  let slot = 0;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    market = (await generateSigner()).publicKey;
    await database.db.none(
      `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, created_at, updated_at, created_slot, created_signature)
       VALUES (1, $1, 1, 'mint', 2, to_timestamp(0), to_timestamp(60), now(), now(), 1, 's')`,
      [market],
    );
    tenant = testTenant();
    redis = connectRedis();
    log = createRedisUpdateLog({ redis, keys: createKeys(tenant) });
    common = testCommon({ TENANT_ID: tenant, API_PORT: '0', API_HOST: '127.0.0.1', PUBLIC_HOSTS: '127.0.0.1', ...HIGH_LIMITS });
    const apiRedis = connectRedis();
    common.shutdown.add('redis', async () => apiRedis.disconnect());
    const live = createLiveStores(common, apiRedis);
    common.shutdown.add('live', () => live.close());
    api = await startApiServer({ common, db: database.db, redis: apiRedis, live, busCarriesIndexer: true });
    proxy = await startFreezableProxy({ host: '127.0.0.1', port: api.port });
  });
  afterAll(async () => {
    await proxy?.close();
    await common?.shutdown.run('test over');
    redis?.disconnect();
    await database?.close();
    await tdb?.drop();
  });

  const publish = (bestBid: number, n = 1) => log.append(Array.from({ length: n }, () => ({ channel: 'orderbook:1', slot: ++slot, data: { marketId: '1', bestBid, bestAsk: 9000 } })));

  it('takes a new snapshot after a seq gap, a resume the log no longer covers, and a 4010 close, and keeps the book live after each', async () => {
    const events: LiveEvent[] = [];
    const client = createMarketClient({ baseUrl: proxy.url.replace(/^redis:/, 'http:'), socket: createNodeSocket, onLiveEvent: (e) => events.push(e), fetch: (r) => fetch(r) });
    const book = client.book({ marketId: '1', address: market });
    try {
      await book.ready;
      await waitFor('subscribed', async () => events.some((e) => e.type === 'subscribed'));
      await publish(4100);
      await book.until((b) => b.bestBid === 4100);
      expect(book.snapshots()).toBe(1);

      // A gap: the log's counter moves past a seq nobody will deliver (a writer gone between
      // numbering and publishing); the next update is seq + 2.
      const seqNow = client.live.last('orderbook:1');
      await redis.incr(createKeys(tenant).streamSeq('orderbook:1'));
      await publish(4200);
      await book.until((b) => b.bestBid === 4200);
      expect(events.filter((e) => e.type === 'gap')).toEqual([{ type: 'gap', channel: 'orderbook:1', after: seqNow, seq: seqNow + 2 }]);
      const gapsBefore = 1;
      await waitFor('the snapshot after the gap', async () => book.snapshots() === 2);

      // A plain reconnect resumes: what was sent while the network was down comes by replay, no snapshot.
      await proxy.down();
      await publish(4300);
      await proxy.up();
      await book.until((b) => b.bestBid === 4300 && b.source === 'update');
      expect(events.filter((e) => e.type === 'subscribed').map((e) => (e as { resumed?: boolean }).resumed)).toEqual([undefined, true]);
      expect(book.snapshots()).toBe(2);

      // Down while more updates pass than the log keeps (1,000, trimmed in whole stream nodes):
      // resumeFrom is too far back, the server says `resumed: false`, the SDK starts over.
      await proxy.down();
      await publish(4400, 1_300);
      await proxy.up();
      await waitFor('the unresumable subscribe', async () => events.some((e) => e.type === 'subscribed' && e.resumed === false), 30_000);
      await waitFor('the snapshot after it', async () => book.snapshots() === 3);
      await publish(4500);
      await book.until((b) => b.bestBid === 4500);

      // The channel's counter gone (expired after a quiet day, evicted): the log starts the
      // sequence over at 1, which is no duplicate: a reset, then the new sequence.
      await redis.del(createKeys(tenant).streamSeq('orderbook:1'));
      await publish(4550);
      await book.until((b) => b.bestBid === 4550);
      expect(client.live.last('orderbook:1')).toBe(1);
      expect(events.filter((e) => e.type === 'gap').length).toBe(gapsBefore + 1);
      await waitFor('the snapshot after the restart', async () => book.snapshots() === 4);

      // The server's 4010 (the live projection switched, D-410): every client starts over.
      api.projectionSwitched();
      await waitFor('the 4010 close', async () => events.some((e) => e.type === 'close' && e.code === 4010), 10_000);
      await waitFor('the snapshot after 4010', async () => book.snapshots() === 5, 20_000);
      await waitFor('subscribed afresh', async () => events.filter((e) => e.type === 'subscribed').length === 4, 20_000);
      await publish(4600);
      await book.until((b) => b.bestBid === 4600);
      const subscribes = events.filter((e) => e.type === 'subscribed').map((e) => (e as { resumed?: boolean }).resumed);
      // The first, the resume, the unresumable resume, the fresh subscribe after 4010 (no resumeFrom: no `resumed`).
      expect(subscribes).toEqual([undefined, true, false, undefined]);
      expect(events.find((e) => e.type === 'close' && e.code === 4010)).toMatchObject({ policy: 'start-over' });
    } finally {
      await book.close();
      client.close();
    }
  }, 90_000);
});
