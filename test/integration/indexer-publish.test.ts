import { isDeepStrictEqual } from 'node:util';
import type { Redis } from '../../core/redis/client';
import { createDatabase, type Database } from '../../core/db';
import { createKeys } from '../../core/redis/keys';
import { createRedisBus, type Bus } from '../../core/redis/bus';
import { createRedisUpdateLog, parseEnvelope, type ChannelUpdate } from '../../core/redis/updates';
import { createPublisher } from '../../indexer/publish';
import { createRedis, redisReady } from '../../core/redis/client';
import { createIndexerHttp } from '../../indexer/http';
import { createIndexer } from '../../indexer/indexer';
import { createRpcSource } from '../../indexer/sources/rpc';
import { createSimulatorSource } from '../../simulator/source';
import { MarketSimulator } from '../../simulator/simulation';
import type { Source } from '../../indexer/sources/types';
import { testCommon } from '../support/common';
import { PROGRAM_ID, simulate } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, TEST_REDIS_URL, testTenant } from '../support/redis';
import { startFreezableProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/tables';

/** The indexer's Redis connection behind a proxy the test can freeze or take down (short REDIS_COMMAND_TIMEOUT_MS). */
async function proxiedRedis() {
  const target = new URL(TEST_REDIS_URL);
  const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const redis = createRedis(proxy.url, { commandTimeout: 100 });
  redis.on('error', () => {});
  await redisReady(redis);
  return {
    proxy,
    redis,
    async close() {
      redis.disconnect();
      await proxy.close();
    },
  };
}

type Update = { channel: string; data: Record<string, unknown> };
/** What a subscriber ends up believing: the latest data of each key (market field, top of book, position) it was sent. */
const latestByKey = (list: Update[]) => new Map(list.map((m) => [`${m.channel} ${String(m.data.field ?? '')} ${String(m.data.marketId ?? '')}`, m.data]));

/** A /ws-like subscriber on a direct Redis connection: every update of the tenant's channels. */
async function subscriber(tenant: string) {
  const redis = connectRedis();
  const bus = createRedisBus({ redis, keys: createKeys(tenant) });
  const received: Update[] = [];
  for (const pattern of ['market:*', 'orderbook:*', 'positions:*']) {
    await bus.subscribe(pattern, (message, channel) => received.push({ channel, data: parseEnvelope(message)!.data }));
  }
  return {
    received,
    async close() {
      await bus.close();
      redis.disconnect();
    },
  };
}

describe('live changes on the Redis bus', () => {
  let tdb: TestDatabase;
  let database: Database;
  const clients: Redis[] = [];
  const buses: Bus[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    clients.forEach((c) => c.disconnect());
    await database.close();
    await tdb.drop();
  });

  it('are published only after commit, on the tenant channels, and agree with the tables', async () => {
    const tenant = testTenant();
    const common = testCommon({ TENANT_ID: tenant, PROGRAM_ID });
    const [pubRedis, subRedis] = [connectRedis(), connectRedis()];
    clients.push(pubRedis, subRedis);
    const updates = createRedisUpdateLog({ redis: pubRedis, keys: createKeys(tenant) });
    const listener = createRedisBus({ redis: subRedis, keys: createKeys(tenant) });
    buses.push(listener);

    // Every market `state` update must already be visible in PostgreSQL when it arrives.
    const checks: Promise<void>[] = [];
    const seen: { channel: string; seq: number; slot: number; data: Record<string, unknown> }[] = [];
    for (const pattern of ['market:*', 'orderbook:*', 'positions:*']) {
      await listener.subscribe(pattern, (message, channel) => {
        const { seq, slot, data } = JSON.parse(message) as { seq: number; slot: number; data: Record<string, unknown> };
        seen.push({ channel, seq, slot, data });
        if (channel.startsWith('market:') && data.field === 'state') {
          checks.push(
            database.db
              .any('SELECT state FROM markets WHERE market_id = $1', [data.marketId])
              .then((rows: { state: number }[]) => expect(rows.map((r) => r.state)).toContain(data.value)),
          );
        }
      });
    }
    const source = createSimulatorSource({ seed: 707, programId: PROGRAM_ID, untilSlot: 400, maxBatchTransactions: 100 });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates, source });
    await indexer.run();
    await waitFor('positions updates', async () => seen.some((s) => s.channel.startsWith('positions:')));
    await Promise.all(checks);
    expect(checks.length).toBeGreaterThan(3);
    const kinds = new Set(seen.map((s) => s.channel.split(':')[0]));
    expect(kinds).toEqual(new Set(['market', 'orderbook', 'positions']));
    const lastSlot = Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot);
    for (const s of seen) expect(s.slot).toBeLessThanOrEqual(lastSlot);
    // Per channel, seq counts 1, 2, 3, ... in delivery order and slots never go back.
    const byChannel = new Map<string, { seq: number; slot: number }[]>();
    for (const s of seen) byChannel.set(s.channel, [...(byChannel.get(s.channel) ?? []), s]);
    for (const list of byChannel.values()) {
      expect(list.map((s) => s.seq)).toEqual(list.map((_, i) => i + 1));
      for (let i = 1; i < list.length; i++) expect(list[i]!.slot).toBeGreaterThanOrEqual(list[i - 1]!.slot);
    }
    const published = await common.metrics.busPublishLatency.get();
    expect(published.values.find((v) => v.metricName?.endsWith('_count'))?.value).toBeGreaterThan(0);
  });
});

describe('publishing while Redis stops answering', () => {
  it('never holds up the commits: each publish gives up after the command timeout and is counted', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 2 });
    const r = await proxiedRedis();
    const common = testCommon({ PROGRAM_ID });
    const updates = createRedisUpdateLog({ redis: r.redis, keys: createKeys(testTenant()) });
    const source = createSimulatorSource({ seed: 77, programId: PROGRAM_ID, untilSlot: 120, maxBatchTransactions: 40 });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates, source });
    r.proxy.freeze();
    try {
      // Without a command timeout the second commit would wait for the first publish forever.
      await indexer.run();
      // Every batch committed: the cursor is at the chain's last transaction up to slot 120.
      const lastTx = simulate(120, { seed: 77 }).txs.at(-1)!;
      expect(Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot)).toBe(lastTx.slot);
      const failures = (await common.metrics.busPublishFailures.get()).values[0]?.value ?? 0;
      expect(failures).toBeGreaterThan(1);
    } finally {
      await r.close();
      await database.close();
      await tdb.drop();
    }
  });
});

describe('publishing across a Redis outage', () => {
  it('sends the updates of a failed publish with the next one, so subscribers end on the committed values', async () => {
    // The updates of a real run (the projector's own messages), published in three steps
    // through the production publisher and update log: before, during and after Redis is away.
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 2 });
    const common = testCommon({ PROGRAM_ID });
    const batches: ChannelUpdate[][] = [];
    const source = createSimulatorSource({ seed: 78, programId: PROGRAM_ID, untilSlot: 200, maxBatchTransactions: 60 });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source });
    indexer.onBatch((r) => batches.push(r.messages));
    await indexer.run();
    await database.close();
    await tdb.drop();
    const messages = batches.flat();
    const third = Math.floor(messages.length / 3);

    const tenant = testTenant();
    const { proxy, redis, close } = await proxiedRedis();
    const sub = await subscriber(tenant);
    try {
      const { publish } = createPublisher({ updates: createRedisUpdateLog({ redis, keys: createKeys(tenant) }), schema: 'public', logger: common.logger, metrics: common.metrics });
      await publish(messages.slice(0, third), performance.now());
      // Redis goes away: the middle third's publish fails at once and nothing of it runs.
      proxy.down();
      await waitFor('disconnected', async () => redis.status !== 'ready');
      await publish(messages.slice(third, 2 * third), performance.now());
      expect((await common.metrics.busPublishFailures.get()).values[0]?.value).toBe(1);
      proxy.up();
      await waitFor('reconnected', async () => redis.status === 'ready');
      await publish(messages.slice(2 * third), performance.now());
      const want = latestByKey(messages);
      // Some keys changed only in the middle third: without their resend they would stay stale.
      const later = latestByKey(messages.slice(2 * third));
      expect([...latestByKey(messages.slice(third, 2 * third)).keys()].some((k) => !later.has(k))).toBe(true);
      await waitFor('every key on its committed value', async () => isDeepStrictEqual(latestByKey(sub.received), want), 10_000);
    } finally {
      await sub.close();
      await close();
    }
  });
});

describe('publishing after a Redis outage on a quiet chain', () => {
  it('sends what failed publishes kept on the next heartbeat, without waiting for a batch', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 3 });
    const { proxy, redis, close } = await proxiedRedis();
    const tenant = testTenant();
    const sub = await subscriber(tenant);
    // A chain that produces a few batches and then nothing: the source stays open, as the RPC
    // source does between polls.
    const sim = new MarketSimulator({ seed: 79, programId: PROGRAM_ID });
    const quiet: Source = {
      name: 'quiet',
      async *batches(_from, signal) {
        for (let b = 0; b < 4; b++) {
          const txs = [];
          for (let i = 0; i < 25; i++) txs.push(...sim.nextBlock().transactions);
          yield txs;
        }
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      },
      chainTip: async () => sim.slot,
      connected: () => true,
      close: async () => {},
    };
    const common = testCommon({ PROGRAM_ID });
    const updates = createRedisUpdateLog({ redis, keys: createKeys(tenant) });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates, source: quiet, heartbeatMs: 100 });
    const messages: ChannelUpdate[] = [];
    let batches = 0;
    indexer.onBatch((r) => {
      batches += 1;
      messages.push(...r.messages);
    });
    let run: Promise<void> | undefined;
    try {
      proxy.down();
      await waitFor('disconnected', async () => redis.status !== 'ready');
      run = indexer.run();
      // Every batch is committed while Redis is away, and none of their updates is published.
      await waitFor('all batches committed', async () => batches === 4, 10_000);
      expect((await common.metrics.busPublishFailures.get()).values[0]?.value).toBeGreaterThanOrEqual(4);
      expect(sub.received).toEqual([]);
      proxy.up();
      const want = latestByKey(messages);
      expect(want.size).toBeGreaterThan(0);
      await waitFor('every key on its committed value', async () => isDeepStrictEqual(latestByKey(sub.received), want), 10_000);
    } finally {
      await indexer.stop();
      await run;
      await sub.close();
      await close();
      await database.close();
      await tdb.drop();
    }
  });
});

describe('health while the chain RPC is down', () => {
  it('stays up but reports degraded with rpcConnected false', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 2 });
    const common = testCommon();
    // Nothing listens on port 1: every call fails and is retried with backoff.
    const source = createRpcSource({ common, rpcUrl: 'http://127.0.0.1:1', wsUrl: 'ws://127.0.0.1:1', programId: PROGRAM_ID, subscribe: false });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source });
    const server = createIndexerHttp({ common, db: database.db, indexer, source, sink: source });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const run = indexer.run().catch(() => {});
    try {
      const health = await waitFor('degraded', async () => {
        const r = await fetch(`${url}/health`);
        const body = (await r.json()) as { status: string; rpcConnected: boolean; checks: { name: string; status: string }[] };
        const failures = (await common.metrics.indexerRpcErrors.get()).values.some((v) => v.labels.kind === 'network' && v.value > 0);
        return r.status === 200 && body.status === 'degraded' && !body.rpcConnected && failures ? body : undefined;
      });
      expect(health.rpcConnected).toBe(false);
      expect(health.checks.find((c) => c.name === 'rpc')?.status).toBe('warn');
    } finally {
      await indexer.stop();
      await run;
      await new Promise((r) => server.close(r));
      await database.close();
      await tdb.drop();
    }
  });
});

describe('writer lock', () => {
  it('stops the writer with an error when its lock session is terminated', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 2 });
    try {
      const common = testCommon({ PROGRAM_ID });
      // A realtime chain never ends by itself: only the lost lock can stop this writer.
      const source = createSimulatorSource({ seed: 808, programId: PROGRAM_ID, realtime: true, slotMs: 50 });
      const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source });
      const run = indexer.run();
      await waitFor('writer', async () => indexer.status().role === 'writer' && (indexer.status().lastProcessedSlot ?? 0) > 0);
      await database.db.any(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'market-indexer-writer-lock%'`,
        [tdb.name],
      );
      await expect(run).rejects.toThrow('writer lease lost');
      expect(indexer.status()).toMatchObject({ role: 'failed', lastError: 'writer lease lost' });
    } finally {
      await database.close();
      await tdb.drop();
    }
  });
});

describe('a failed commit', () => {
  it('stops the writer: no batch queued behind it is written, and the cursor stays at the last committed batch', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 4 });
    try {
      // The third batch commit fails in its cursor update (a sequence counts attempts across
      // rollbacks); a later batch, were it committed, would succeed and skip the third's events.
      await database.db.none(`
        CREATE SEQUENCE cursor_advances;
        CREATE FUNCTION fail_third_advance() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF nextval('cursor_advances') = 3 THEN RAISE EXCEPTION 'third batch refused'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER fail_third_advance BEFORE UPDATE ON indexer_cursor FOR EACH ROW
          WHEN (NEW.last_activity_at IS DISTINCT FROM OLD.last_activity_at) EXECUTE FUNCTION fail_third_advance();`);
      const common = testCommon({ PROGRAM_ID });
      const source = createSimulatorSource({ seed: 909, programId: PROGRAM_ID, untilSlot: 300, maxBatchTransactions: 40 });
      const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source });
      const committed: number[] = [];
      indexer.onBatch((r) => committed.push(r.slot!));
      await expect(indexer.run()).rejects.toThrow('third batch refused');
      // Closing the pool waits for any query still under way, so a commit that should not have
      // been attempted has finished before the checks.
      await database.close();
      const check = createDatabase({ url: tdb.url, poolMax: 1 });
      try {
        expect(committed).toHaveLength(2);
        const cursor = await check.db.one('SELECT last_processed_slot::int AS slot FROM indexer_cursor');
        expect(cursor.slot).toBe(committed[1]);
        const ledger = await check.db.one('SELECT max(slot)::int AS slot FROM raw_events');
        expect(ledger.slot).toBeLessThanOrEqual(committed[1]!);
        // Attempts that reached the cursor update: the two commits and the refused one, no more.
        expect((await check.db.one('SELECT last_value::int AS n FROM cursor_advances')).n).toBe(3);
      } finally {
        await check.close();
      }
    } finally {
      await database.close().catch(() => {});
      await tdb.drop();
    }
  });
});
