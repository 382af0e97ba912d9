import { buildTransaction, type ProgramEvent, type RawTransaction } from '../../core/events';
import type { Db } from '../../core/db';
import { marketsPage, type MarketsPageQuery } from '../../server/read/queries/markets';
import { addressOf, signatureOf } from '../../simulator/ids';
import { PROGRAM_ID, projectionDb, type ProjectionDb } from '../support/indexer';
import { tableDigests } from '../support/tables';
import { marketCountDrift } from '../support/truth';

/**
 * GET /markets finds deep offsets through the projector's block counts (D-130). These tests hold
 * it to the plain `ORDER BY market_id DESC, id DESC LIMIT OFFSET` over markets the projector
 * wrote, across block boundaries, with and without the state filter, while batches commit.
 */

type Row = Record<string, unknown>;
const STATES = [undefined, 0, 1, 2, 3, 4, 5];
const BLOCK = 1024n; // the width of market_list_block() in migration 0007

async function naivePage(db: Pick<Db, 'any' | 'one'>, q: MarketsPageQuery): Promise<{ rows: Row[]; total: number }> {
  const where = q.state === undefined ? '' : 'WHERE state = $3';
  const [rows, count] = await Promise.all([
    db.any<Row>(`SELECT * FROM markets ${where} ORDER BY market_id DESC, id DESC LIMIT $1 OFFSET $2`, [q.limit, q.offset, q.state]),
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM markets ${where}`, [q.limit, q.offset, q.state]),
  ]);
  return { rows, total: count.n };
}

/** A seeded stream of markets: dense and sparse epoch ids, several markets per id, ids on block edges, u64 extremes; every state reached. */
function marketEvents(count: number, seed: number): RawTransaction[] {
  let x = seed;
  const rnd = (n: number) => (x = (x * 48_271) % 2_147_483_647) % n;
  const signer = addressOf('deep-offset-signer');
  const edges = [0n, 1n, BLOCK - 1n, BLOCK, 2n * BLOCK - 1n, 2n * BLOCK, 2n ** 64n - 1n, 2n ** 64n - BLOCK];
  const epochOf = (i: number): bigint => {
    const r = rnd(10);
    if (r < 6) return 29_446_000n + BigInt(rnd(3_000)); // one feed family's dense run, ~3 blocks
    if (r < 8) return 5_889_000n + BigInt(rnd(20)) * 1_031n; // sparse: a few markets in each of many blocks
    if (r < 9) return edges[rnd(edges.length)]!;
    return 29_446_000n + BigInt(i % 5); // many markets sharing a handful of ids
  };
  const events: ProgramEvent[] = [];
  const progress: { market: string; state: number; target: number }[] = [];
  const advance = (m: (typeof progress)[number]) => {
    const market = m.market;
    const next: ProgramEvent[] = [
      { kind: 'TradingStarted', data: { market, startPrice: 100n, startPriceConf: 1n, startPriceExpo: -8, publishTime: 1n } },
      { kind: 'MarketSettling', data: { market } },
      { kind: 'MarketResolved', data: { market, endPrice: 101n, endPriceConf: 1n, endPriceExpo: -8, outcome: 1, publishTime: 2n } },
      { kind: 'MarketClosed', data: { market } },
    ];
    events.push(next[m.state - 1]!);
    m.state += 1;
  };
  for (let i = 0; i < count; i++) {
    const market = addressOf(`deep-offset-market:${seed}:${i}`);
    events.push({
      kind: 'MarketInitialized',
      data: {
        market, marketId: epochOf(i), creator: signer, oracleFeed: null, oracleFeedId: 'ab'.repeat(32), settlementMint: addressOf('mint'),
        durationSeconds: 60n, tStart: 1_767_300_000n, tEnd: 1_767_300_060n, maxConfidenceRatioBps: 100, initialCollateral: 0n,
      },
    });
    progress.push({ market, state: 1, target: 1 + rnd(5) });
    // Earlier markets move on meanwhile, some in the batch that created them, some later.
    for (let k = 0; k < 2; k++) {
      const m = progress[rnd(progress.length)]!;
      if (m.state < m.target) advance(m);
    }
  }
  for (const m of progress) while (m.state < m.target) advance(m);
  const txs: RawTransaction[] = [];
  for (let i = 0; i < events.length; i += 7) {
    const slot = 10 + txs.length;
    txs.push(buildTransaction({
      programId: PROGRAM_ID, signature: signatureOf(`deep-offset:${seed}:${slot}`), slot, blockTime: 1_767_300_000 + slot, signer,
      eventAuthority: addressOf('authority'), instructionName: 'Test', events: events.slice(i, i + 7),
    }));
  }
  return txs;
}

/** Offsets at and around where each block starts in the list of `state`, and past the end. */
async function boundaryOffsets(db: Db, state: number | undefined): Promise<number[]> {
  const starts = await db.map(
    `SELECT (sum(n) OVER (ORDER BY block DESC) - n)::int AS start
       FROM (SELECT block, sum(n) AS n FROM market_list_blocks ${state === undefined ? '' : 'WHERE state = $1'} GROUP BY block) b`,
    [state],
    (r: { start: number }) => r.start,
  );
  const total = (await naivePage(db, { state, limit: 1, offset: 0 })).total;
  return [...new Set([...starts.flatMap((s) => [s - 1, s]), total - 1, total, total + 3, 1_000_000])].filter((o) => o >= 0).sort((a, b) => a - b);
}

describe('deep offsets of GET /markets (real PostgreSQL)', () => {
  const txs = marketEvents(2_500, 7);
  let p: ProjectionDb;

  beforeAll(async () => {
    p = await projectionDb();
    await p.apply(txs, 150);
  });
  afterAll(() => p.close());

  it('keeps exact block counts, a row per state for every block with a market', async () => {
    expect(await marketCountDrift(p.database.db)).toEqual([]);
    const blocks = await p.database.db.one('SELECT count(DISTINCT block)::int AS blocks, count(*)::int AS rows, sum(n)::int AS n FROM market_list_blocks');
    expect(blocks.rows).toBe(blocks.blocks * 6);
    expect(blocks.n).toBe(2_500);
    // The data spans many blocks, and every state the list can be filtered by holds markets.
    expect(blocks.blocks).toBeGreaterThan(20);
    const states = await p.database.db.map('SELECT DISTINCT state FROM markets ORDER BY state', [], (r: { state: number }) => r.state);
    expect(states).toEqual([1, 2, 3, 4, 5]);
  });

  it('answers every offset around every block boundary as a plain OFFSET does, with and without the state filter', async () => {
    let compared = 0;
    for (const state of STATES) {
      for (const [i, offset] of (await boundaryOffsets(p.database.db, state)).entries()) {
        // A page of one entry ends at the boundary; pages of 50 and 100 run across it.
        const q = { state, limit: [1, 50, 100][i % 3]!, offset };
        expect({ q, page: await marketsPage(p.database.db, q) }).toEqual({ q, page: await naivePage(p.database.db, q) });
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThan(200);
  });

  it('is identical whatever the batch boundaries, and a replay changes nothing', async () => {
    const other = await projectionDb();
    try {
      await other.pipelined(txs, 37);
      const replay = await other.apply(txs, 500);
      expect(replay.reduce((n, r) => n + r.applied, 0)).toBe(0);
      const [a, b] = await Promise.all([tableDigests(p.database.db), tableDigests(other.database.db)]);
      for (const table of ['markets', 'market_counts', 'market_list_blocks']) expect({ table, digest: b[table] }).toEqual({ table, digest: a[table] });
    } finally {
      await other.close();
    }
  });

  it('matches a plain OFFSET in the same snapshot while the indexer commits batches', async () => {
    const live = await projectionDb();
    const more = marketEvents(1_200, 8);
    const { pgp } = live.database;
    const snapshot = new pgp.txMode.TransactionMode({ tiLevel: pgp.txMode.isolationLevel.repeatableRead, readOnly: true });
    let x = 1;
    const rnd = (n: number) => (x = (x * 48_271) % 2_147_483_647) % n;
    let done = false;
    let checked = 0;
    // The writer commits its next batch only after the reader has checked the last one, so every
    // committed state is looked at; the reader also runs while a batch is being written.
    let readerTick: () => void = () => {};
    const writer = (async () => {
      try {
        for (let i = 0; i < more.length && !done; i += 60) {
          const seen = checked;
          await new Promise<void>((resolve) => {
            readerTick = () => (checked > seen || done) && resolve();
            readerTick();
          });
          await live.projector.applyBatch(more.slice(i, i + 60), { writerEpoch: 0 });
        }
      } finally {
        done = true;
      }
    })();
    const snapshots = new Set<string>();
    try {
      while (!done) {
        await live.database.db.tx({ mode: snapshot }, async (t) => {
          // count and sum(state) grow with every batch: each of its events adds a market or moves one on.
          const { total, seen } = await t.one<{ total: number; seen: string }>(`SELECT count(*)::int AS total, count(*) || ':' || COALESCE(sum(state), 0) AS seen FROM markets`);
          snapshots.add(seen);
          const state = STATES[rnd(STATES.length)];
          const q = { state, limit: 1 + rnd(100), offset: rnd(total + 2) };
          expect({ q, page: await marketsPage(t, q) }).toEqual({ q, page: await naivePage(t, q) });
        });
        checked += 1;
        readerTick();
      }
      await writer;
      expect(snapshots.size).toBeGreaterThanOrEqual(Math.ceil(more.length / 60));
      expect(await marketCountDrift(live.database.db)).toEqual([]);
    } finally {
      done = true; // a failed check must not leave the writer waiting for the next
      readerTick();
      await writer.catch(() => {});
      await live.close();
    }
  });
});
