import { createDatabase } from '../../core/db';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, type ApiChild } from '../support/processes';
import { REDIS_TARGETS, TEST_REDIS_URL, testTenant, type RedisTarget } from '../support/redis';
import { PROGRAM_ID } from '../support/indexer';
import { waitFor } from '../support/tables';
import { refusedUpgrade, WsClient } from '../support/ws';

/** Two real API processes and a real indexer process sharing one PostgreSQL and one Redis. */
describe('WebSocket across API replicas (real processes)', () => {
  let tdb: TestDatabase;
  const children: ApiChild[] = [];
  const clients: WsClient[] = [];
  const targets: RedisTarget[] = [];
  let env: Record<string, string>;

  async function api(): Promise<{ child: ApiChild; ws: string }> {
    const child = spawnApi(env);
    children.push(child);
    return { child, ws: `ws://127.0.0.1:${await child.port}/ws` };
  }
  async function open(url: string): Promise<WsClient> {
    const c = await WsClient.open(url);
    clients.push(c);
    await c.next((m) => m.type === 'connected');
    return c;
  }

  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  beforeEach(() => {
    env = { DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), PROGRAM_ID, WS_IP_LEASE_MS: '3000' };
  });
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.ws.terminate());
    for (const c of children.splice(0)) {
      c.child.kill('SIGKILL');
      await c.exited;
    }
    for (const t of targets.splice(0)) await t.close();
  });
  afterAll(async () => {
    await tdb.drop();
  });

  it('refuses the 11th connection from one IP across two replicas, and a dead replica\'s leases expire', async () => {
    const [a, b] = await Promise.all([api(), api()]);
    for (let i = 0; i < 5; i++) await open(a.ws);
    for (let i = 0; i < 5; i++) await open(b.ws);
    for (const url of [a.ws, b.ws]) {
      const refused = await refusedUpgrade(url);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('RATE_LIMITED');
    }
    // Closing one connection on B frees a place that A can use.
    await clients[9]!.close();
    await waitFor('lease released on close', async () => WsClient.open(a.ws).then((c) => (clients.push(c), c)).catch(() => undefined));
    // A dies without releasing its 6 leases: they expire after WS_IP_LEASE_MS, and B can hold 10.
    a.child.child.kill('SIGKILL');
    await a.child.exited;
    let onB = 4;
    await waitFor('dead replica leases expired', async () => {
      while (onB < 10) {
        const c = await WsClient.open(b.ws).catch(() => undefined);
        if (!c) return false;
        clients.push(c);
        onB += 1;
      }
      return true;
    });
    expect((await refusedUpgrade(b.ws)).status).toBe(429);
  }, 60_000);

  it.each(REDIS_TARGETS)('delivers an update published by a separate indexer process to a client of another replica, on $name; SIGTERM closes with 1001', async (t) => {
    const target = await t.start();
    targets.push(target);
    // A database of its own: the indexer must start from an empty cursor on each target.
    const own = await createTestDatabase();
    targets.push({ url: own.url, close: () => own.drop() });
    env.REDIS_URL = target.url;
    env.DATABASE_URL = own.url;
    const [a, b] = await Promise.all([api(), api()]);
    // The simulator's first markets: marketId = floor(unix time / 60) from its fixed genesis.
    const first = Math.floor(1_767_225_600 / 60);
    const ids = [0, 1, 2, 3].map((i) => String(first + i));
    const onA = await open(a.ws);
    const onB = await open(b.ws);
    for (const id of ids) {
      expect(await onB.request({ type: 'subscribe', channel: `orderbook:${id}` })).toMatchObject({ type: 'subscribed' });
      expect(await onB.request({ type: 'subscribe', channel: `market:${id}` })).toMatchObject({ type: 'subscribed' });
    }
    await onA.request({ type: 'subscribe', channel: `orderbook:${ids[0]}` });

    const indexer = spawnIndexer(['--source', 'simulator', '--seed', '4242', '--until-slot', '400', '--batch-size', '50', '--feeds', '1'], env);
    expect(await indexer.exited).toEqual({ code: 0, signal: null });
    // The last top-of-book update per market (delivered after the indexer exited) equals what it committed.
    const database = createDatabase({ url: own.url, poolMax: 1 });
    try {
      const rows = await database.db.any('SELECT market_id::text AS id, best_bid, best_ask FROM markets WHERE market_id = ANY($1::bigint[])', [ids]);
      expect(rows.filter((r) => r.best_bid !== null).length).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length); // one feed: one market per id
      for (const row of rows) {
        const lastOf = () => onB.received.filter((m) => m.type === 'update' && m.channel === `orderbook:${row.id}`).at(-1);
        // A market whose book stayed empty never had a top-of-book change to publish.
        if (row.best_bid === null && row.best_ask === null && !lastOf()) continue;
        await waitFor(`last orderbook:${row.id} update`, async () => lastOf()?.data.bestBid === row.best_bid && lastOf()?.data.bestAsk === row.best_ask);
      }
    } finally {
      await database.close();
    }
    const bookUpdates = onB.received.filter((m) => m.type === 'update' && m.channel === `orderbook:${ids[0]}`);
    expect(bookUpdates.map((m) => m.seq)).toEqual(bookUpdates.map((_, i) => i + 1));
    // Replica A got the same sequence for the channel its client holds.
    await onA.next((m) => m.type === 'update' && m.seq === bookUpdates.length);
    expect(onA.received.filter((m) => m.type === 'update').map((m) => m.seq)).toEqual(bookUpdates.map((m) => m.seq));
    onA.assertValid();
    onB.assertValid();

    b.child.child.kill('SIGTERM');
    expect(await onB.closed).toEqual({ code: 1001, reason: 'Server shutting down' });
    expect(await b.child.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});
