import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { createDatabase, type Database } from '../../core/db';
import type { RawTransaction } from '../../core/events';
import type { Common } from '../../core/common';
import { createIndexerHttp, WEBHOOK_PATH } from '../../indexer/http';
import { createIndexer, type Indexer } from '../../indexer/indexer';
import { createRpcSource } from '../../indexer/sources/rpc';
import { createRpcClient } from '../../indexer/sources/rpc-client';
import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { createWebhookSource } from '../../indexer/sources/webhook-source';
import type { Source } from '../../indexer/sources/types';
import type { TransactionSink } from '../../indexer/sources/webhook';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { tableDigests, waitFor } from '../support/tables';
import { compareWithTruth } from '../support/truth';

const SECRET = 'a-webhook-secret-of-at-least-32-characters';

interface Running {
  common: Common;
  tdb: TestDatabase;
  database: Database;
  indexer: Indexer;
  server: http.Server;
  url: string;
  run: Promise<void>;
  cursorSlot(): Promise<number>;
  stop(): Promise<void>;
}

/** An indexer process's parts, in this process, over a real database and HTTP port. */
async function startIndexer(source: Source, sink: TransactionSink | undefined, common: Common): Promise<Running> {
  const tdb = await createTestDatabase();
  const database = createDatabase({ url: tdb.url, poolMax: 4 });
  const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source, heartbeatMs: 200 });
  const server = createIndexerHttp({ common, db: database.db, indexer, source, sink });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const run = indexer.run();
  return {
    common,
    tdb,
    database,
    indexer,
    server,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    run,
    cursorSlot: async () => Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot),
    async stop() {
      await indexer.stop();
      await source.close();
      await new Promise((r) => server.close(r));
      await database.close();
      await tdb.drop();
    },
  };
}

/** Caught up: every successful chain transaction is in the ledger (failed ones are never fetched). */
const caughtUpWith = (chain: SimulatorRpcServer, r: Running) => async () => {
  const want = chain.transactions().filter((t) => t.meta?.err === null).length;
  const { n } = await r.database.db.one('SELECT count(*)::int AS n FROM processed_transactions');
  return n === want && (await r.cursorSlot()) === Math.max(...chain.transactions().map((t) => t.slot));
};

describe('RPC source end to end against the simulator JSON-RPC server', () => {
  const sim = new MarketSimulator({ seed: 404, programId: PROGRAM_ID });
  let chain: SimulatorRpcServer;
  let endpoints: { url: string; wsUrl: string };
  let a: Running;
  const caughtUp = (r: Running) => caughtUpWith(chain, r);

  beforeAll(async () => {
    chain = createSimulatorRpcServer({ simulator: sim });
    endpoints = await chain.listen();
    chain.advance(400); // history to backfill
    const common = testCommon({ WEBHOOK_SECRET: SECRET });
    const source = createRpcSource({ common, rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, pollIntervalMs: 400, maxBatchTransactions: 250 });
    a = await startIndexer(source, source, common);
  });
  afterAll(async () => {
    await a?.stop();
    await chain.close();
  });

  it('backfills history in slot order', async () => {
    await waitFor('backfill', caughtUp(a));
    expect(chain.callCount('getSignaturesForAddress')).toBeGreaterThan(0);
    expect(await compareWithTruth(a.database.db, sim.truth())).toEqual({});
  });

  it('follows the live chain through logsSubscribe and rides out RPC failures', async () => {
    await waitFor('subscription', async () => chain.subscriberCount() === 1);
    chain.injectFaults('http500', 'rate_limit', 'rpc_error', 'null_transaction');
    chain.advance(150);
    await waitFor('live catch-up', caughtUp(a));
    const errors = await a.common.metrics.indexerRpcErrors.get();
    const kinds = new Set(errors.values.map((v) => v.labels.kind));
    expect(kinds).toEqual(new Set(['http', 'rate_limited', 'rpc']));
    expect(await compareWithTruth(a.database.db, sim.truth())).toEqual({});
  });

  it('closes a gap that no notification announces with the signature poll', async () => {
    const polls = chain.callCount('getSignaturesForAddress');
    chain.withholdNotifications(() => true);
    const produced = chain.advance(60);
    expect(produced.length).toBeGreaterThan(0);
    await waitFor('gap closed by poll', caughtUp(a));
    chain.withholdNotifications(() => false);
    expect(chain.callCount('getSignaturesForAddress')).toBeGreaterThan(polls);
    expect(await compareWithTruth(a.database.db, sim.truth())).toEqual({});
    expect(await a.database.db.one('SELECT count(*)::int AS n FROM dead_letters')).toEqual({ n: 0 });
  });

  it('fetches each notified transaction once: ahead of the poll, which takes its body (D-250)', async () => {
    await waitFor('subscription', async () => chain.subscriberCount() === 1);
    const fetched = chain.callCount('getTransaction');
    let live = 0;
    for (let i = 0; i < 20; i++) {
      live += chain.advance(1).filter((t) => t.meta?.err === null).length;
      await waitFor('slot indexed', caughtUp(a));
    }
    expect(live).toBeGreaterThan(0);
    expect(chain.callCount('getTransaction') - fetched).toBe(live);
    expect(await compareWithTruth(a.database.db, sim.truth())).toEqual({});
  });

  it('serves health, readiness and metrics on the indexer port', async () => {
    const health = (await (await fetch(`${a.url}/health`)).json()) as { checks: { name: string }[] };
    expect(health).toMatchObject({ status: 'healthy', dbConnected: true, rpcConnected: true, indexerRunning: true, role: 'writer' });
    expect(health.checks.map((c: { name: string }) => c.name)).toEqual(['database', 'rpc', 'indexer', 'slot_lag']);
    expect(await (await fetch(`${a.url}/ready`)).json()).toEqual({ ready: true, dbConnected: true, indexerRunning: true });
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    expect(metrics).toMatch(/service_indexer_transactions_processed_total\{source="rpc"\} [1-9]\d*/);
    expect(metrics).toMatch(/service_indexer_slot_lag \d+/);
    expect(metrics).toContain('service_indexer_processing_duration_seconds_bucket');
    // The tenant's indexing as stored, with the writer lock holder (what the operator reads).
    const status = (await (await fetch(`${a.url}/status`)).json()) as Record<string, unknown>;
    const row = await a.database.db.one<{ slot: string; writer: string }>('SELECT c.last_processed_slot AS slot, s.writer_id AS writer FROM indexer_cursor c, indexer_status s');
    expect(status).toEqual({
      status: 'healthy',
      synced: true,
      slotLag: expect.any(Number),
      lastProcessedSlot: row.slot,
      lastActivityAt: expect.any(String),
      indexerRunning: true,
      writer: row.writer,
      // The schema the API reads and no build (D-435).
      projection: { live: 'public', build: null },
    });
    expect(row.writer).toMatch(/^.+:\d+$/);
  });

  it('gives identical tables when the same transactions also arrive through the webhook at once', async () => {
    const common = testCommon({ WEBHOOK_SECRET: SECRET });
    const source = createRpcSource({ common, rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, pollIntervalMs: 400, maxBatchTransactions: 300 });
    const b = await startIndexer(source, source, common);
    try {
      const all = chain.transactions();
      const posts: Promise<Response>[] = [];
      for (let i = 0; i < all.length; i += 200) {
        posts.push(fetch(`${b.url}${WEBHOOK_PATH}`, { method: 'POST', headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' }, body: JSON.stringify(all.slice(i, i + 200)) }));
      }
      // Duplicates of what the RPC already delivered are normal and harmless.
      for (const r of await Promise.all(posts)) expect(r.status).toBe(202);
      await waitFor('second indexer caught up', caughtUp(b));
      expect(await tableDigests(b.database.db)).toEqual(await tableDigests(a.database.db));
    } finally {
      await b.stop();
    }
  });
});

describe('RPC source while the node stops answering', () => {
  it('stops at once on shutdown instead of waiting out the call', async () => {
    const sim = new MarketSimulator({ seed: 406, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim });
    const endpoints = await chain.listen();
    chain.advance(40);
    const common = testCommon({});
    // A call may take a minute before it counts as failed: longer than this test may run.
    const source = createRpcSource({
      common, rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID,
      subscribe: false, pollIntervalMs: 100, requestTimeoutMs: 60_000,
    });
    const r = await startIndexer(source, undefined, common);
    try {
      await waitFor('backfill', caughtUpWith(chain, r));
      // The next poll's call is taken in and never answered.
      chain.injectFaults('hang');
      await waitFor('a call hanging', async () => chain.faultsLeft() === 0);
      await r.indexer.stop();
      await expect(r.run).resolves.toBeUndefined();
      // Giving up on shutdown is not an RPC failure.
      expect((await common.metrics.indexerRpcErrors.get()).values.filter((v) => v.value > 0)).toEqual([]);
    } finally {
      await r.stop();
      await chain.close();
    }
  });
});

describe('RPC client deadlines', () => {
  it("counts a call that outlives the caller's deadline as a timeout, and one given up on shutdown as nothing", async () => {
    const chain = createSimulatorRpcServer({ simulator: new MarketSimulator({ seed: 407, programId: PROGRAM_ID }) });
    const endpoints = await chain.listen();
    const common = testCommon({});
    const rpc = createRpcClient({ url: endpoints.url, logger: common.logger, metrics: common.metrics });
    const timeouts = async () => (await common.metrics.indexerRpcErrors.get()).values.find((v) => v.labels.kind === 'timeout')?.value ?? 0;
    try {
      expect(await rpc.call('getSlot', [])).toBe(0);
      expect(rpc.connected()).toBe(true);
      // A deadline (as the chain-tip heartbeat sets): the node was too slow.
      chain.injectFaults('hang');
      await expect(rpc.call('getSlot', [], AbortSignal.timeout(200))).rejects.toThrow();
      expect(await timeouts()).toBe(1);
      expect(rpc.connected()).toBe(false);
      // Shutdown: the caller went away, the node did nothing wrong.
      expect(await rpc.call('getSlot', [])).toBe(0);
      chain.injectFaults('hang');
      const shutdown = new AbortController();
      const pending = rpc.call('getSlot', [], shutdown.signal);
      await waitFor('a call hanging', async () => chain.faultsLeft() === 0);
      shutdown.abort();
      await expect(pending).rejects.toThrow();
      expect(await timeouts()).toBe(1);
      expect(rpc.connected()).toBe(true);
    } finally {
      await chain.close();
    }
  });
});

describe('RPC client retries', () => {
  it("leave no listener behind on the caller's long-lived signal", async () => {
    // A node that fails twice, then answers: the client backs off twice on the way.
    let calls = 0;
    const node = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => (++calls <= 2 ? res.writeHead(500).end() : res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":7}')));
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const common = testCommon({});
    const rpc = createRpcClient({ url: `http://127.0.0.1:${(node.address() as AddressInfo).port}`, logger: common.logger, metrics: common.metrics, baseBackoffMs: 1 });
    const running = new AbortController();
    try {
      expect(await rpc.call('getSlot', [], running.signal)).toBe(7);
      expect(calls).toBe(3);
      // A backfill makes hundreds of thousands of calls under one signal: each must take its listeners away.
      expect(getEventListeners(running.signal, 'abort')).toHaveLength(0);
    } finally {
      node.closeAllConnections();
      await new Promise((r) => node.close(r));
    }
  });
});

describe('RPC source over a backlog longer than it keeps in memory', () => {
  it('lists the pages it dropped again, oldest first, and indexes the same tables', async () => {
    const sim = new MarketSimulator({ seed: 405, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim });
    const endpoints = await chain.listen();
    chain.advance(300);
    const total = chain.transactions().length;
    const PAGE = 40;
    const KEPT = 3;
    // Only the walk back and the pages listed again call the RPC: no notification, no poll
    // before the test ends.
    const common = testCommon({});
    const source = createRpcSource({
      common, rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID,
      subscribe: false, pollIntervalMs: 600_000, maxBatchTransactions: 100, pageSize: PAGE, pagesInMemory: KEPT,
    });
    const r = await startIndexer(source, undefined, common);
    try {
      await waitFor('backfill', caughtUpWith(chain, r));
      expect(await compareWithTruth(r.database.db, sim.truth())).toEqual({});
      // The walk lists every page once (and one empty page when the last is full); all but the
      // newest page and the oldest KEPT - 1 are listed a second time on the way forward.
      const pages = Math.ceil(total / PAGE);
      expect(pages).toBeGreaterThan(KEPT + 2);
      const walk = pages + (total % PAGE === 0 ? 1 : 0);
      expect(chain.callCount('getSignaturesForAddress')).toBe(walk + pages - KEPT);
      expect(await r.database.db.one('SELECT count(*)::int AS n FROM dead_letters')).toEqual({ n: 0 });
    } finally {
      await r.stop();
      await chain.close();
    }
  });
});

describe('webhook ingest route', () => {
  let w: Running;
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${w.url}${WEBHOOK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: SECRET, ...headers }, body });

  const sim = new MarketSimulator({ seed: 505, programId: PROGRAM_ID });
  let chain: SimulatorRpcServer;
  let source: ReturnType<typeof createWebhookSource>;
  let txs: RawTransaction[] = [];

  beforeAll(async () => {
    // The webhook source takes its order and chain tip from the RPC (D-472).
    chain = createSimulatorRpcServer({ simulator: sim });
    const { url } = await chain.listen();
    const common = testCommon({ WEBHOOK_SECRET: SECRET });
    source = createWebhookSource({ common, rpcUrl: url, programId: PROGRAM_ID, pollIntervalMs: 100 });
    w = await startIndexer(source, source, common);
    await waitFor('the source to list', async () => chain.callCount('getSignaturesForAddress') >= 2);
    txs = chain.advance(80);
  });
  afterAll(async () => {
    await w.stop();
    await chain.close();
  });

  it('refuses a wrong or missing secret with 401 and writes nothing', async () => {
    for (const auth of ['wrong', `Bearer ${SECRET}x`, '']) {
      const r = await post(JSON.stringify(txs), { authorization: auth });
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: 'Invalid webhook secret', code: 'UNAUTHORIZED' });
    }
    expect(await w.database.db.one('SELECT count(*)::int AS n FROM processed_transactions')).toEqual({ n: 0 });
  });

  it('refuses malformed and oversized bodies with 400 and writes nothing', async () => {
    const cases: [string, string][] = [
      ['{not json', 'INVALID_REQUEST_BODY'],
      ['{}', 'VALIDATION_ERROR'],
      ['[]', 'VALIDATION_ERROR'],
      [JSON.stringify([{ slot: -1, blockTime: 1, transaction: { signatures: ['x'] }, meta: null }]), 'VALIDATION_ERROR'],
      [JSON.stringify([{ ...txs[0], transaction: { ...txs[0]!.transaction, signatures: ["'; DROP TABLE markets; --"] } }]), 'VALIDATION_ERROR'],
      [JSON.stringify(Array.from({ length: 40 }, () => ({ pad: 'x'.repeat(200_000) }))), 'LIMIT_EXCEEDED'],
    ];
    for (const [body, code] of cases) {
      const r = await post(body);
      expect(r.status).toBe(400);
      const json = (await r.json()) as Record<string, unknown>;
      expect(json.code).toBe(code);
      expect(Object.keys(json).sort()).toEqual(['code', 'error']);
      expect(JSON.stringify(json)).not.toMatch(/at \w+ \(|node_modules|SELECT|INSERT/);
    }
    expect(await w.database.db.one('SELECT count(*)::int AS n FROM processed_transactions')).toEqual({ n: 0 });
  });

  it('applies pushed transactions, and duplicates change nothing', async () => {
    const r = await post(JSON.stringify(txs));
    expect(r.status).toBe(202);
    expect(await r.json()).toEqual({ accepted: txs.length });
    await waitFor('applied', async () => (await w.cursorSlot()) === txs.filter((t) => t.meta?.err === null).at(-1)!.slot);
    const before = await tableDigests(w.database.db);
    expect((await post(JSON.stringify(txs.slice(10, 30)))).status).toBe(202);
    await waitFor('duplicates seen', async () => source.stats().duplicates >= 20);
    expect(await tableDigests(w.database.db)).toEqual(before);
    expect(await compareWithTruth(w.database.db, sim.truth())).toEqual({});
  });
});
