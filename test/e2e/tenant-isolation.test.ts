import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { walletHeaders } from '../support/api';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, type ApiChild } from '../support/processes';
import { rawGet } from '../support/raw-http';
import { connectRedis, TEST_REDIS_URL, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { refusedUpgrade, WsClient } from '../support/ws';

/**
 * Two tenants on one PostgreSQL server and one Redis, as the kit runs them (a database and a
 * TENANT_ID each, one REDIS_URL): real API processes and a real indexer process.
 */
describe('two tenants on one PostgreSQL server and one Redis share nothing', () => {
  const LIMIT = 5;
  const tenants: { name: string; tdb: TestDatabase; api: ApiChild; port: number; ws: string; env: Record<string, string> }[] = [];
  const clients: WsClient[] = [];
  // The simulator's first market: marketId = floor(unix time / 60) from its fixed genesis.
  const market = String(Math.floor(1_767_225_600 / 60));

  beforeAll(async () => {
    for (const name of ['a', 'b']) {
      const tdb = await createTestDatabase();
      const env = {
        DATABASE_URL: tdb.url,
        REDIS_URL: TEST_REDIS_URL,
        TENANT_ID: testTenant(),
        PROGRAM_ID,
        RATE_LIMIT_MAX_REQUESTS: String(LIMIT),
        PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: String(LIMIT),
        WS_MAX_CONNECTIONS_PER_IP: '2',
      };
      const api = spawnApi(env);
      const port = await api.port;
      tenants.push({ name, tdb, api, port, ws: `ws://127.0.0.1:${port}/ws`, env });
    }
  }, 60_000);
  afterAll(async () => {
    clients.splice(0).forEach((c) => c.ws.terminate());
    for (const t of tenants) {
      t.api.child.kill('SIGKILL');
      await t.api.exited;
      await t.tdb.drop();
    }
  });
  const [A, B] = [() => tenants[0]!, () => tenants[1]!];
  const open = async (url: string) => {
    const c = await WsClient.open(url);
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  };

  it('keeps per-IP /ws leases, update streams and data apart: an indexer on tenant A reaches only A', async () => {
    // Each tenant holds its two /ws connections from 127.0.0.1; shared leases would refuse B's.
    const onA = [await open(A().ws), await open(A().ws)];
    const onB = [await open(B().ws), await open(B().ws)];
    for (const t of [A(), B()]) expect((await refusedUpgrade(t.ws)).status).toBe(429);
    for (const c of [...onA, ...onB]) expect(await c.request({ type: 'subscribe', channel: `orderbook:${market}` })).toMatchObject({ type: 'subscribed' });

    const indexer = spawnIndexer(['--source', 'simulator', '--seed', '4242', '--until-slot', '300', '--batch-size', '50', '--feeds', '1'], A().env);
    expect(await indexer.exited).toEqual({ code: 0, signal: null });
    // A top of book the simulator never quotes: B's marker.
    const MARKER = { marketId: market, bestBid: 1, bestAsk: 9_999 };
    const redis = connectRedis();
    let lastSeq: number;
    try {
      // The indexer has exited: A's channel counter holds its last update's seq.
      lastSeq = Number(await redis.get(createKeys(A().env.TENANT_ID!).streamSeq(`orderbook:${market}`)));
      expect(lastSeq).toBeGreaterThan(1);
      await waitFor('A gets its last update', async () => onA[0]!.received.some((m) => m.type === 'update' && m.seq === lastSeq));
      // Redis runs commands one at a time and delivers in that order: a marker published on B
      // after A's updates went out would arrive behind any of A's updates that leaked to B.
      await createRedisUpdateLog({ redis, keys: createKeys(B().env.TENANT_ID!) }).append([{ channel: `orderbook:${market}`, slot: 1, data: MARKER }]);
    } finally {
      redis.disconnect();
    }
    for (const c of onB) {
      const first = await c.next((m) => m.type === 'update');
      expect(first).toMatchObject({ channel: `orderbook:${market}`, seq: 1, data: MARKER });
    }
    // B's stream holds its marker alone; A's holds A's updates.
    const late = await open(A().ws).catch(() => undefined);
    expect(late).toBeUndefined(); // still A's two leases
    onA[1]!.ws.terminate();
    const resumed = await waitFor('a lease freed on A', async () => open(A().ws).catch(() => undefined));
    expect(await resumed.request({ type: 'subscribe', channel: `orderbook:${market}`, resumeFrom: 0 })).toMatchObject({ resumed: true, replayed: lastSeq, latestSeq: lastSeq });
    expect(await onB[0]!.request({ type: 'unsubscribe', channel: `orderbook:${market}` })).toMatchObject({ type: 'unsubscribed' });
    expect(await onB[0]!.request({ type: 'subscribe', channel: `orderbook:${market}`, resumeFrom: 0 })).toMatchObject({ resumed: true, replayed: 1, latestSeq: 1 });

    // Data: A's database has the markets the indexer wrote; B's has none.
    const markets = async (port: number) => (await fetch(`http://127.0.0.1:${port}/api/v1/markets`)).json() as Promise<{ data: { total: number } }>;
    expect((await markets(A().port)).data.total).toBeGreaterThan(0);
    expect((await markets(B().port)).data.total).toBe(0);
  }, 90_000);

  it('keeps nonces apart: a wallet nonce used on tenant A is still fresh on tenant B', async () => {
    const pair = nacl.sign.keyPair();
    const wallet = { address: bs58.encode(pair.publicKey), secretKey: pair.secretKey };
    const headers = walletHeaders(wallet, 'GET /positions', { nonce: 'shared-nonce-1' });
    const get = (port: number) => rawGet(port, '/api/v1/positions', { localAddress: '127.0.0.3', headers });
    expect((await get(A().port)).status).toBe(200);
    const replay = await get(A().port);
    expect([replay.status, replay.json.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await get(B().port)).status).toBe(200);
    expect((await get(B().port)).status).toBe(401);
  });

  it('keeps rate limits apart: a flood that exhausts an IP on tenant A leaves its quota on B whole', async () => {
    const flood = await Promise.all(Array.from({ length: LIMIT * 3 }, () => rawGet(A().port, '/api/v1/markets', { localAddress: '127.0.0.4' })));
    expect(flood.filter((r) => r.status === 429)).toHaveLength(LIMIT * 2);
    const onB = await rawGet(B().port, '/api/v1/markets', { localAddress: '127.0.0.4' });
    expect(onB.status).toBe(200);
    expect(onB.headers['x-ratelimit-remaining']).toBe(String(LIMIT - 1));
    expect((await rawGet(A().port, '/api/v1/markets', { localAddress: '127.0.0.4' })).status).toBe(429);
  });
});
