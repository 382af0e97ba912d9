import { createDatabase } from '../../core/db';
import type { RawTransaction } from '../../core/events';
import { createIndexer } from '../../indexer/indexer';
import { createRpcSource } from '../../indexer/sources/rpc';
import { createSimulatorRpcServer } from '../../simulator/rpc-server';
import { MarketSimulator } from '../../simulator/simulation';
import { Random } from '../../simulator/traders/random';
import { testCommon } from '../support/common';
import { PROGRAM_ID, projectionDb } from '../support/indexer';
import { createTestDatabase } from '../support/pg';
import { tableDigests, waitFor } from '../support/tables';

jest.setTimeout(180_000);

// A new tenant's backfill through an RPC that behaves like a hosted provider (D-240): a rate
// limit the source is not told of (it finds it by the 429s), random 429s, 5xxs and unanswered
// calls, batches of getTransaction calls. Whatever the provider does, the tables equal those of
// the same chain indexed in-process, and every 429's Retry-After held the whole source back.
describe('backfill through a provider-like RPC with faults and batches', () => {
  it('indexes every transaction once and honours Retry-After', async () => {
    const sim = new MarketSimulator({ seed: 433, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({
      simulator: sim,
      // Seeded, so that the fault switch's first draws (and hence faults > 0 below) do not
      // depend on chance.
      provider: { latencyMs: 5, jitterMs: 3, requestsPerSecond: 800, faultRate: 0.03, random: seededUnit(433), retryAfter: true },
    });
    while (chain.ledgerSize() < 3_000) chain.advance(20);
    const live = chain.transactions().filter((t) => t.meta?.err === null);
    const endpoints = await chain.listen();

    const CONCURRENCY = 4;
    const source = createRpcSource({
      common: testCommon({}), rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, subscribe: false, pollIntervalMs: 600_000,
      maxBatchTransactions: 500, pageSize: 400, fetchConcurrency: CONCURRENCY, rpcBatchSize: 10, requestTimeoutMs: 1_000,
    });
    try {
      await backfillAndCompare(source, live, 150_000);
      const provider = chain.provider.stats();
      const client = source.rpc.stats();
      // The limit or the fault switch answered 429s (which first is chance), and the client saw them.
      expect(provider.rateLimited + provider.faults.rateLimited).toBeGreaterThan(0);
      expect(provider.faults.rateLimited + provider.faults.serverError + provider.faults.timeout).toBeGreaterThan(0);
      expect(client.rateLimited).toBeGreaterThan(0);
      expect(client.rateLimited).toBeLessThanOrEqual(provider.rateLimited + provider.faults.rateLimited);
      expect(source.limiter.stats().rateLimited).toBe(client.rateLimited);
      // Honoured: while a Retry-After ran, only requests already under way arrived (a source
      // that kept sending would have sent hundreds at 5 ms a call).
      expect(provider.maxArrivalsInPause).toBeLessThanOrEqual(2 * CONCURRENCY);
      // Batches were taken and none were refused.
      expect(client.calls).toBeGreaterThan(2 * client.requests);
      expect(provider.batchesRefused).toBe(0);
    } finally {
      await source.close();
      await chain.close();
    }
  });

  it('asks for the next chunk only once every call of the one before is under way, so the first batch comes after one chunk (D-244)', async () => {
    const sim = new MarketSimulator({ seed: 435, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim, provider: { latencyMs: 5 } });
    while (chain.ledgerSize() < 1_500) chain.advance(20);
    const endpoints = await chain.listen();
    const source = createRpcSource({
      common: testCommon({}), rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, subscribe: false,
      pollIntervalMs: 600_000, maxBatchTransactions: 300, fetchConcurrency: 4,
    });
    const stop = new AbortController();
    try {
      let first: { transactions: number; served: number } | undefined;
      for await (const batch of source.batches({ lastSlot: 0, lastSignature: null }, stop.signal)) {
        first = { transactions: batch.length, served: chain.callCount('getTransaction') };
        break;
      }
      expect(first!.transactions).toBeGreaterThan(200);
      // The chunk ahead may have had a few calls served while the last ones of the first were
      // in flight; sharing the concurrency from the start, it had about as many as the first.
      expect(first!.served).toBeLessThan(first!.transactions * 1.5);
    } finally {
      stop.abort();
      await source.close();
      await chain.close();
    }
  });

  it.each([
    ['more calls than it takes (-32600)', { maxBatchCalls: 30 }],
    ['a body larger than it takes (HTTP 413)', { maxBodyBytes: 6_000 }],
  ])('sends halves of a batch the provider refuses for %s, and batches no larger from then on (D-474)', async (_what, limits) => {
    const sim = new MarketSimulator({ seed: 436, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim, provider: { latencyMs: 2 }, limits });
    chain.advance(150);
    const live = chain.transactions().filter((t) => t.meta?.err === null);
    const endpoints = await chain.listen();
    const source = createRpcSource({ common: testCommon({}), rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, subscribe: false, pollIntervalMs: 600_000, rpcBatchSize: 100, fetchConcurrency: 4 });
    try {
      await backfillAndCompare(source, live, 60_000);
      // 100 refused, 50 refused, then 25: still batches (today's code fell back to single calls).
      expect(source.rpc.batchLimit()).toBe(25);
      expect(chain.callCount('getTransaction')).toBe(live.length);
      const { requests, calls } = source.rpc.stats();
      expect(calls).toBeGreaterThan(8 * requests);
    } finally {
      await source.close();
      await chain.close();
    }
  });

  it('backs off from 429s without Retry-After (as providers send them) and finishes the backfill (D-474)', async () => {
    const sim = new MarketSimulator({ seed: 437, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim, provider: { latencyMs: 2, requestsPerSecond: 400 } });
    while (chain.ledgerSize() < 1_200) chain.advance(20);
    const live = chain.transactions().filter((t) => t.meta?.err === null);
    const endpoints = await chain.listen();
    const source = createRpcSource({ common: testCommon({}), rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, subscribe: false, pollIntervalMs: 600_000, fetchConcurrency: 8 });
    try {
      await backfillAndCompare(source, live, 120_000);
      expect(chain.provider.stats().rateLimited).toBeGreaterThan(0);
      expect(source.limiter.stats().rateLimited).toBeGreaterThan(0);
      // Paused by its own jittered backoff, at most 16 s a time.
      expect(source.limiter.stats().lastPauseMs).toBeGreaterThan(0);
      expect(source.limiter.stats().lastPauseMs).toBeLessThanOrEqual(16_000);
    } finally {
      await source.close();
      await chain.close();
    }
  });

  it('falls back to single calls when the provider refuses batches', async () => {
    const sim = new MarketSimulator({ seed: 434, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim, provider: { latencyMs: 2, batches: false } });
    chain.advance(100);
    const live = chain.transactions().filter((t) => t.meta?.err === null);
    const endpoints = await chain.listen();
    const source = createRpcSource({ common: testCommon({}), rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, subscribe: false, pollIntervalMs: 600_000, rpcBatchSize: 20 });
    try {
      await backfillAndCompare(source, live, 60_000);
      const provider = chain.provider.stats();
      // Each of the 8 workers' batches refused at most once a halving (20, 10, 5, 2: D-474),
      // then single calls only.
      expect(provider.batchesRefused).toBeGreaterThan(0);
      expect(provider.batchesRefused).toBeLessThanOrEqual(8 * 4);
      expect(chain.callCount('getTransaction')).toBe(live.length);
    } finally {
      await source.close();
      await chain.close();
    }
  });
});

/**
 * Runs the indexer on `source` from an empty database until it has committed the newest of
 * `live`, then expects its tables to equal those of `live` indexed in-process.
 */
async function backfillAndCompare(source: ReturnType<typeof createRpcSource>, live: RawTransaction[], withinMs: number): Promise<void> {
  const lastSlot = Math.max(...live.map((t) => t.slot));
  const tdb = await createTestDatabase();
  const database = createDatabase({ url: tdb.url, poolMax: 4 });
  const indexer = createIndexer({ common: testCommon({}), db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source, heartbeatMs: 60_000 });
  const reference = await projectionDb();
  try {
    const running = indexer.run();
    await waitFor('backfill', async () => indexer.status().lastProcessedSlot === lastSlot, withinMs);
    await indexer.stop();
    await running;
    await reference.apply(live, 500);
    expect(await tableDigests(database.db)).toEqual(await tableDigests(reference.database.db));
  } finally {
    await indexer.stop();
    await database.close();
    await tdb.drop();
    await reference.close();
  }
}

/** A seeded uniform stream in [0, 1) for the provider's `random`. */
function seededUnit(seed: number): () => number {
  const rng = new Random(seed);
  return () => rng.int(0, 999_999) / 1_000_000;
}
