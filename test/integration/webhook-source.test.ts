import http from 'node:http';
import type { Common } from '../../core/common';
import { createDatabase, type Database } from '../../core/db';
import { createIndexerHttp, WEBHOOK_PATH } from '../../indexer/http';
import { createIndexer, type Indexer } from '../../indexer/indexer';
import { createWebhookSource } from '../../indexer/sources/webhook-source';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { MarketSimulator } from '../../simulator/simulation';
import { createWebhookSender } from '../../simulator/webhook-sender';
import { testCommon } from '../support/common';
import { PROGRAM_ID, projectionDb } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { tableDigests, waitFor } from '../support/tables';

const SECRET = 'a-webhook-secret-of-at-least-32-characters';
// The chain makes a slot every 10 ms here (a real one every 400 ms), so the hold-back is 0.4 s.
const HOLD_BACK = 40;
const SLOT_MS = 10;
const slots = async (n: number, each: (txs: ReturnType<SimulatorRpcServer['advance']>) => void = () => {}) => {
  for (let i = 0; i < n; i++) {
    each(chain.advance(1));
    await new Promise((r) => setTimeout(r, SLOT_MS));
  }
};

let chain: SimulatorRpcServer;

describe('webhook source against a sender that retries, drops, duplicates and reorders (D-472)', () => {
  const sim = new MarketSimulator({ seed: 606, programId: PROGRAM_ID });
    let common: Common;
  let tdb: TestDatabase;
  let database: Database;
  let indexer: Indexer;
  let server: http.Server;
  let hook: string;
  let source: ReturnType<typeof createWebhookSource>;
  let run: Promise<void>;
  const cursorSlot = async () => Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot);
  const lag = async () => (await common.metrics.indexerSlotLag.get()).values[0]?.value ?? -1;

  beforeAll(async () => {
    chain = createSimulatorRpcServer({ simulator: sim });
    const { url } = await chain.listen();
    common = testCommon({ WEBHOOK_SECRET: SECRET });
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    source = createWebhookSource({ common, rpcUrl: url, programId: PROGRAM_ID, holdBackSlots: HOLD_BACK, pollIntervalMs: 100 });
    indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source, heartbeatMs: 100 });
    server = createIndexerHttp({ common, db: database.db, indexer, source, sink: source });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    hook = `http://127.0.0.1:${(server.address() as { port: number }).port}${WEBHOOK_PATH}`;
    run = indexer.run();
    // A webhook source starts at the program's newest transaction of its start: the chain waits for it.
    await waitFor('the source to list', async () => chain.callCount('getSignaturesForAddress') >= 2);
  });
  afterAll(async () => {
    await indexer.stop();
    await run.catch(() => undefined);
    await source.close();
    await new Promise((r) => server.close(r));
    await database.close();
    await tdb.drop();
    await chain.close();
  });

  it('applies every transaction once, in chain order, whatever the deliveries did: tables equal a direct run', async () => {
    // Helius's receiver deadline is 1 s; a loaded test machine is given 5.
    const lossy = createWebhookSender({ url: hook, authorization: SECRET, seed: 3, attempts: 2, timeoutMs: 5_000, retryDelayMs: 30, lossShare: 0.3, duplicateShare: 0.25, maxDelayMs: 250 });
    await slots(60, (txs) => lossy.send(txs));
    await lossy.idle();
    const s = lossy.stats();
    expect(s.dropped).toBeGreaterThan(1);
    expect(s.duplicated).toBeGreaterThan(3);
    // Then deliveries that all arrive, while the chain moves past the hold-back of the dropped ones.
    const clean = createWebhookSender({ url: hook, authorization: SECRET, seed: 4 });
    await slots(HOLD_BACK + 10, (txs) => clean.send(txs));
    await clean.idle();
    const last = sim.slot;
    await waitFor('caught up', async () => (await cursorSlot()) >= Math.max(...chain.transactions().filter((t) => t.meta?.err === null).map((t) => t.slot)));
    const direct = await projectionDb();
    try {
      // As the RPC source, it never fetches a failed transaction (nothing of it is applied).
      await direct.apply(chain.transactions().filter((t) => t.slot <= last && t.meta?.err === null));
      expect(await tableDigests(database.db)).toEqual(await tableDigests(direct.database.db));
      expect(await database.db.any('SELECT reason, count(*)::int FROM dead_letters GROUP BY 1')).toEqual([]);
    } finally {
      await direct.close();
    }
    // Dropped deliveries were fetched; duplicates were dropped.
    expect(source.stats().recovered).toBeGreaterThan(0);
    expect(source.stats().duplicates).toBeGreaterThan(0);
  });

  it('reads the chain tip from the RPC: the slot lag grows while deliveries stop, and the walk then recovers what they missed', async () => {
    const before = await cursorSlot();
    await slots(HOLD_BACK - 10); // no delivery
    await waitFor('the lag to show the silence', async () => (await lag()) >= HOLD_BACK - 10);
    expect(await cursorSlot()).toBe(before);
    await slots(HOLD_BACK);
    // What is older than the hold-back is fetched: the lag comes back under it.
    await waitFor('recovered', async () => (await cursorSlot()) > before && (await lag()) <= HOLD_BACK + 1);
  });
});
