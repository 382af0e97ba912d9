import { createDatabase } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createRpcSource, type RpcSourceOptions } from '../../indexer/sources/rpc';
import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase } from '../support/pg';
import { tableDigests, waitFor } from '../support/tables';

/**
 * The history walk against a provider's pool of nodes that lag behind each other (D-460,
 * D-461): an indexer started from nothing must build the tables a run against one node builds.
 */

const PAGE = 100;

interface Outcome {
  digests: Record<string, unknown>;
  deadLetters: Record<string, number>;
  processed: number;
}

/** An indexer from nothing until its cursor reaches the chain's newest slot: its tables and dead letters. */
async function indexFromNothing(chain: SimulatorRpcServer, url: string, extra: Partial<RpcSourceOptions> = {}): Promise<Outcome & { ms: number; letters: { signature: string; reason: string; detail: string }[] }> {
  const started = performance.now();
  const common = testCommon({});
  const tdb = await createTestDatabase();
  const database = createDatabase({ url: tdb.url, poolMax: 4 });
  const source = createRpcSource({ common, rpcUrl: url, wsUrl: url.replace('http', 'ws'), programId: PROGRAM_ID, subscribe: false, pollIntervalMs: 100, pageSize: PAGE, maxBatchTransactions: 250, ...extra });
  const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source, heartbeatMs: 200 });
  const run = indexer.run();
  const newest = Math.max(...chain.transactions().map((t) => t.slot));
  try {
    await waitFor('cursor at the newest slot', async () => Number((await database.db.oneOrNone('SELECT last_processed_slot FROM indexer_cursor'))?.last_processed_slot ?? -1) >= newest);
    const dead = await database.db.any<{ reason: string; n: number }>('SELECT reason, count(*)::int AS n FROM dead_letters GROUP BY reason');
    const ms = performance.now() - started;
    const { n } = await database.db.one<{ n: number }>('SELECT count(*)::int AS n FROM processed_transactions');
    const letters = await database.db.any<{ signature: string; reason: string; detail: string }>('SELECT signature, reason, detail FROM dead_letters ORDER BY id');
    return { digests: await tableDigests(database.db), deadLetters: Object.fromEntries(dead.map((d) => [d.reason, d.n])), processed: n, ms, letters };
  } finally {
    await indexer.stop();
    await run.catch(() => undefined);
    await source.close();
    await database.close();
    await tdb.drop();
  }
}

describe('the history walk on a pool of nodes that lag (D-461)', () => {
  const sim = new MarketSimulator({ seed: 461, programId: PROGRAM_ID });
  let chain: SimulatorRpcServer;
  let url: string;
  let single: Awaited<ReturnType<typeof indexFromNothing>>;
  /** Slots of the newest history holding more than a page of signatures: what the lagging node lacks. */
  let lag = 0;

  beforeAll(async () => {
    chain = createSimulatorRpcServer({ simulator: sim });
    url = (await chain.listen()).url;
    chain.advance(250);
    const txs = chain.transactions();
    const newest = txs[txs.length - 1]!.slot;
    // More than one page and a tenth of signatures newer than the lagging node's slot, as the
    // issue measured (the newest 1,100 of the program's signatures at 1,000 a page).
    while (txs.filter((t) => t.slot > newest - lag).length < PAGE * 1.1) lag++;
    single = await indexFromNothing(chain, url);
  });
  afterAll(() => chain.close());

  it('builds the same tables as against one node when a node lags more than a page behind', async () => {
    expect(single.deadLetters).toEqual({});
    chain.pool.configure({ lags: [0, lag] });
    const pooled = await indexFromNothing(chain, url);
    chain.pool.configure({ lags: [] });
    expect({ deadLetters: pooled.deadLetters, processed: pooled.processed }).toEqual({ deadLetters: {}, processed: single.processed });
    expect(pooled.digests).toEqual(single.digests);
  });

  it('never lists below the cursor when a node lacks the cursor and ignores until (D-462)', async () => {
    const txs = chain.transactions();
    const newest = txs[txs.length - 1]!;
    // The cursor 30 slots back; the node that takes the first listing is 40 back, so it lacks it.
    let at = txs.length - 1;
    while (txs[at]!.slot > newest.slot - 30) at--;
    const cursor = { lastSlot: txs[at]!.slot, lastSignature: txs[at]!.transaction.signatures[0]! };
    const want = txs.slice(at + 1).filter((t) => t.meta?.err === null).map((t) => t.transaction.signatures[0]);
    chain.pool.configure({ lags: [40, 0] });
    // Small pages, one kept in memory: the walk lists pages again on its way forward.
    const source = createRpcSource({ common: testCommon({}), rpcUrl: url, wsUrl: url.replace('http', 'ws'), programId: PROGRAM_ID, subscribe: false, pageSize: 40, pagesInMemory: 1 });
    const stop = new AbortController();
    const got: { slot: number; signature: string }[] = [];
    try {
      for await (const batch of source.batches(cursor, stop.signal)) {
        got.push(...batch.map((t) => ({ slot: t.slot, signature: t.transaction.signatures[0]! })));
        if (got.some((g) => g.signature === newest.transaction.signatures[0])) break;
      }
    } finally {
      stop.abort();
      chain.pool.configure({ lags: [] });
      await source.close();
    }
    expect(Math.min(...got.map((g) => g.slot))).toBeGreaterThanOrEqual(cursor.lastSlot);
    expect(got.map((g) => g.signature).filter((s) => s !== cursor.lastSignature)).toEqual(want);
  });

  it('dead-letters a body that never comes with its reason instead of stalling everything behind it (D-463)', async () => {
    const txs = chain.transactions().filter((t) => t.meta?.err === null);
    const lost = txs[Math.floor(txs.length / 2)]!.transaction.signatures[0]!;
    chain.withholdBodies((s) => s === lost);
    try {
      const run = await indexFromNothing(chain, url, { bodyGiveUpMs: 1_000 });
      // The lost transaction first; what it changed (a position it moved) after it, as the projection judges.
      expect(run.letters[0]).toEqual({ signature: lost, reason: 'body_unavailable', detail: expect.stringContaining('the provider has its status') });
      expect(run.letters.filter((l) => l.reason === 'body_unavailable' || l.reason === 'transaction_unknown')).toHaveLength(1);
      expect(run.processed).toBe(single.processed - 1);
      process.stdout.write(`a body that never comes: the indexer from nothing caught up in ${Math.round(run.ms)} ms (single node, every body: ${Math.round(single.ms)} ms)\n`);
    } finally {
      chain.withholdBodies(() => false);
    }
  });
});
