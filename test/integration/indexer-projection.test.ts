import { buildTransaction, type ProgramEvent, type RawTransaction } from '../../core/events';
import { FencedError } from '../../indexer/projection';
import { addressOf, signatureOf } from '../../simulator/ids';
import { PROGRAM_ID, projectionDb, simulate, type ProjectionDb } from '../support/indexer';
import { tableDigests } from '../support/tables';
import { compareWithTruth } from '../support/truth';

describe('projection against the simulated chain (real PostgreSQL)', () => {
  // 2,600 slots are simulated; the first 2,500 form the indexed chain, the rest a later batch.
  const { sim, txs: all } = simulate(2_500, { seed: 101 });
  const truth = sim.truth();
  for (let i = 0; i < 100; i++) all.push(...sim.nextBlock().transactions);
  const txs = all.filter((t) => t.slot <= 2_500);
  const later = all.filter((t) => t.slot > 2_500);
  let p: ProjectionDb;

  beforeAll(async () => {
    p = await projectionDb();
  });
  afterAll(() => p.close());

  it('runs a chain with thousands of events and every kind', () => {
    expect(truth.events).toBeGreaterThan(15_000);
    expect(truth.failedTransactions).toBeGreaterThan(0);
    const kinds = new Set(txs.flatMap((t) => (t.meta?.logMessages ?? []).filter((l) => l.startsWith('Program log: Instruction:'))));
    expect(kinds.size).toBeGreaterThanOrEqual(12);
  });

  it('projects every table equal to the simulator ground truth, row by row', async () => {
    const results = await p.apply(txs, 700);
    expect(results.flatMap((r) => r.deadLetters)).toEqual([]);
    expect(results.reduce((n, r) => n + r.applied, 0)).toBe(truth.events);
    expect(await compareWithTruth(p.database.db, truth)).toEqual({});
  });

  it('leaves every table identical when the same stream is replayed, in other batch sizes', async () => {
    const before = await tableDigests(p.database.db);
    const again = await p.apply(txs, 333);
    expect(again.reduce((n, r) => n + r.applied, 0)).toBe(0);
    expect(again.reduce((n, r) => n + r.duplicates, 0)).toBe(truth.events);
    const single = await p.apply(txs.slice(100, 140), 1);
    expect(single.every((r) => r.applied === 0 && r.messages.length === 0)).toBe(true);
    expect(await tableDigests(p.database.db)).toEqual(before);
  });

  it('refuses to write for a stale writer epoch', async () => {
    const before = await tableDigests(p.database.db);
    expect(later.length).toBeGreaterThan(0);
    await expect(p.projector.applyBatch(later, { writerEpoch: 7 })).rejects.toBeInstanceOf(FencedError);
    expect(await tableDigests(p.database.db)).toEqual(before);
  });
});

describe('batching does not change the result', () => {
  it('projects the same tables from one big batch, small batches and one transaction at a time', async () => {
    const { txs } = simulate(150, { seed: 202, emit: 'cpi' });
    const dbs = await Promise.all([projectionDb(), projectionDb(), projectionDb()]);
    try {
      await dbs[0]!.apply(txs, 100_000);
      await dbs[1]!.apply(txs, 37);
      await dbs[2]!.apply(txs, 1);
      const [a, b, c] = await Promise.all(dbs.map((d) => tableDigests(d.database.db)));
      expect(b).toEqual(a);
      expect(c).toEqual(a);
      expect(a!.trades!.rows).toBeGreaterThan(20);
    } finally {
      await Promise.all(dbs.map((d) => d.close()));
    }
  });

  it('applies only the new events of a batch that overlaps what the ledger holds', async () => {
    const { txs } = simulate(120, { seed: 204, emit: 'mixed' });
    const [overlapping, whole] = await Promise.all([projectionDb(), projectionDb()]);
    try {
      const cut = Math.floor(txs.length / 2);
      const [first] = await overlapping.apply(txs.slice(0, cut), 100_000);
      const overlap = txs.slice(cut - 30, cut).map((t) => t.transaction.signatures[0]);
      const { n: repeated } = await overlapping.database.db.one('SELECT count(*)::int AS n FROM raw_events WHERE signature = ANY($1)', [overlap]);
      expect(repeated).toBeGreaterThan(0);
      const [second] = await overlapping.apply(txs.slice(cut - 30), 100_000);
      expect(second!.duplicates).toBe(repeated);
      const { n: total } = await overlapping.database.db.one('SELECT count(*)::int AS n FROM raw_events');
      expect(first!.applied + second!.applied).toBe(total);
      await whole.apply(txs, 100_000);
      expect(await tableDigests(overlapping.database.db)).toEqual(await tableDigests(whole.database.db));
    } finally {
      await Promise.all([overlapping.close(), whole.close()]);
    }
  });

  it('prepares the same batch whether parsing yields to the event loop or not', async () => {
    const { txs } = simulate(60, { seed: 203, emit: 'mixed' });
    const p = await projectionDb();
    try {
      const strip = (b: ReturnType<typeof p.projector.prepare>) => ({ ...b, result: { ...b.result, phases: undefined } });
      // A budget of 0 ms yields after every transaction.
      const sliced = await p.projector.prepareInSlices([...txs, txs[0]!], 0);
      expect(strip(sliced)).toEqual(strip(p.projector.prepare([...txs, txs[0]!])));
      expect(sliced.parsed.length).toBe(txs.length); // the repeated transaction is dropped once
    } finally {
      await p.close();
    }
  });
});

describe('applying the next batch ahead while one commits (D-62)', () => {
  const { sim, txs } = simulate(400, { seed: 205, emit: 'mixed' });
  const truth = sim.truth();
  const strip = (rs: { messages: unknown[]; applied: number; duplicates: number; slot: number | null }[]) =>
    rs.map((r) => ({ messages: r.messages, applied: r.applied, duplicates: r.duplicates, slot: r.slot }));

  it('gives the tables and messages of applying nothing ahead, with a cache large, tiny or off', async () => {
    const [off, large, tiny] = await Promise.all([projectionDb({ cacheRows: 0 }), projectionDb(), projectionDb({ cacheRows: 50 })]);
    try {
      const expected = await off.apply(txs, 150);
      const [a, b] = [await large.pipelined(txs, 150), await tiny.pipelined(txs, 150)];
      expect(await compareWithTruth(large.database.db, truth)).toEqual({});
      const digests = await tableDigests(off.database.db);
      expect(await tableDigests(large.database.db)).toEqual(digests);
      expect(await tableDigests(tiny.database.db)).toEqual(digests);
      // Messages are built when a batch is applied: a later batch changing the same rows
      // before this one commits must not show in them.
      expect(strip(a)).toEqual(strip(expected));
      expect(strip(b)).toEqual(strip(expected));
      expect(expected.length).toBeGreaterThan(5);
      expect(new Set(expected.map((r) => r.path))).toEqual(new Set(['in_transaction']));
      expect(new Set([...a, ...b].map((r) => r.path))).toEqual(new Set(['ahead']));
    } finally {
      await Promise.all([off.close(), large.close(), tiny.close()]);
    }
  });

  it('applies again the batches applied after one whose events were partly in the ledger', async () => {
    const [p, whole] = await Promise.all([projectionDb(), projectionDb()]);
    try {
      const cut = Math.floor(txs.length / 3);
      await p.apply(txs.slice(0, cut), 100_000);
      // Applied ahead as if all new: the first 40 transactions are counted twice in the cache,
      // and the second batch is applied on top of that.
      const first = await p.projector.applyAhead(p.projector.prepare(txs.slice(cut - 40, 2 * cut)));
      const second = await p.projector.applyAhead(p.projector.prepare(txs.slice(2 * cut)));
      expect(first.ahead).toBeDefined();
      expect(second.ahead).toBeDefined();
      const r1 = await p.projector.commit(first, { writerEpoch: 0 });
      const r2 = await p.projector.commit(second, { writerEpoch: 0 });
      expect(r1.duplicates).toBeGreaterThan(0);
      expect(r2.duplicates).toBe(0);
      expect([r1.path, r2.path]).toEqual(['reapplied', 'reapplied']);
      await whole.apply(txs, 100_000);
      expect(await tableDigests(p.database.db)).toEqual(await tableDigests(whole.database.db));
      expect(await compareWithTruth(p.database.db, truth)).toEqual({});
    } finally {
      await Promise.all([p.close(), whole.close()]);
    }
  });

  it('leaves out the effects of a batch whose commit failed or never came', async () => {
    const [failed, abandoned, reference] = await Promise.all([projectionDb(), projectionDb(), projectionDb()]);
    try {
      const a = txs.slice(0, 300);
      const b = txs.slice(300, 600);
      const c = txs.slice(600, 900);
      for (const d of [failed, abandoned, reference]) await d.apply(a, 100_000);
      await reference.apply(c, 100_000);

      const b1 = await failed.projector.applyAhead(failed.projector.prepare(b));
      const c1 = await failed.projector.applyAhead(failed.projector.prepare(c));
      await expect(failed.projector.commit(b1, { writerEpoch: 3 })).rejects.toBeInstanceOf(FencedError);
      expect((await failed.projector.commit(c1, { writerEpoch: 0 })).path).toBe('reapplied');

      await abandoned.projector.applyAhead(abandoned.projector.prepare(b));
      // Applied ahead on the effects of a batch whose commit never came: applied again from the tables.
      const c2 = await abandoned.projector.applyAhead(abandoned.projector.prepare(c));
      expect((await abandoned.projector.commit(c2, { writerEpoch: 0 })).path).toBe('reapplied');

      const expected = await tableDigests(reference.database.db);
      expect(await tableDigests(failed.database.db)).toEqual(expected);
      expect(await tableDigests(abandoned.database.db)).toEqual(expected);
      expect(expected.raw_events!.rows).toBeGreaterThan(0);
    } finally {
      await Promise.all([failed.close(), abandoned.close(), reference.close()]);
    }
  });
});

describe('publish messages', () => {
  it('carry the changed market fields, top of book and positions, with the slot', async () => {
    const { txs } = simulate(200, { seed: 303 });
    const p = await projectionDb();
    try {
      const [r] = await p.apply(txs, 100_000);
      const channels = new Set(r!.messages.map((m) => m.channel.split(':')[0]));
      expect(channels).toEqual(new Set(['market', 'orderbook', 'positions']));
      for (const m of r!.messages) expect(m.slot).toBe(r!.slot);
      const state = r!.messages.find((m) => m.channel.startsWith('market:') && m.data.field === 'state');
      expect(state?.data).toMatchObject({ marketId: expect.stringMatching(/^\d+$/), value: expect.any(Number) });
      const pos = r!.messages.find((m) => m.channel.startsWith('positions:'))!;
      expect(pos.channel).toBe(`positions:${pos.data.owner}`);
      expect(pos.data).toEqual({ marketId: expect.any(String), owner: expect.any(String), yesShares: expect.stringMatching(/^\d+$/), noShares: expect.stringMatching(/^\d+$/) });
      // A market's own top of book agrees with its bestBid/bestAsk fields.
      const market = await p.database.db.one('SELECT market_id, best_bid, best_ask FROM markets WHERE best_bid IS NOT NULL ORDER BY id DESC LIMIT 1');
      const top = r!.messages.filter((m) => m.channel === `orderbook:${market.market_id}`).pop();
      expect(top?.data).toMatchObject({ bestBid: market.best_bid, bestAsk: market.best_ask });
    } finally {
      await p.close();
    }
  });
});

describe('bad input becomes dead letters and the batch goes on', () => {
  const signer = addressOf('bad-input-signer');
  const authority = addressOf('authority');
  let n = 0;
  const tx = (events: ProgramEvent[], slot: number, mutate?: (t: RawTransaction) => void): RawTransaction => {
    const t = buildTransaction({
      programId: PROGRAM_ID, signature: signatureOf(`bad:${n++}`), slot, blockTime: 1_767_300_000 + slot, signer,
      eventAuthority: authority, instructionName: 'Test', events,
    });
    mutate?.(t);
    return t;
  };
  const market = addressOf('bad-market');
  const init: ProgramEvent = {
    kind: 'MarketInitialized',
    data: { market, marketId: 1n, creator: signer, oracleFeed: null, oracleFeedId: 'ab'.repeat(32), settlementMint: addressOf('mint'), durationSeconds: 60n, tStart: 1_767_300_000n, tEnd: 1_767_300_060n, maxConfidenceRatioBps: 100, initialCollateral: 0n },
  };

  it('stores each with its reason, counts it once, and still applies the good events', async () => {
    const p = await projectionDb();
    try {
      const good = tx([init, { kind: 'TickSizeChanged', data: { tickSizeBps: 25 } }], 10);
      const unknownOrderFill = tx([{ kind: 'OrderCancelled', data: { market, orderId: 99n, owner: signer, remainingQuantity: 5n } }], 11);
      const overClaim = tx([{ kind: 'ReferrerClaimed', data: { referrer: signer, settlementMint: addressOf('mint'), tokenAccount: signer, amount: 1n } }], 12);
      const skipState = tx([{ kind: 'MarketResolved', data: { market, endPrice: 1n, endPriceConf: 0n, endPriceExpo: -8, outcome: 1, publishTime: 1n } }], 13);
      const garbage = tx([{ kind: 'TickSizeChanged', data: { tickSizeBps: 50 } }], 14, (t) => {
        const logs = t.meta!.logMessages!;
        const i = logs.findIndex((l) => l.startsWith('Program data: '));
        logs.splice(i, 0, `Program data: ${Buffer.from('not an event at all').toString('base64')}`);
      });
      const truncated = tx([{ kind: 'TickSizeChanged', data: { tickSizeBps: 75 } }], 15, (t) => {
        t.meta!.logMessages = [...t.meta!.logMessages!.slice(0, 5), 'Log truncated'];
      });
      const badTick = tx([{ kind: 'TickSizeChanged', data: { tickSizeBps: 0 } }], 16);
      const wrongSplit = tx([{ kind: 'FeeConfigChanged', data: { feeCapBps: 65_000, decayRateBps: 1, protocolShareBps: 1, creatorShareBps: 1, referralShareBps: 1 } }], 17);
      const batch = [good, unknownOrderFill, overClaim, skipState, garbage, truncated, badTick, wrongSplit];

      const [r] = await p.apply(batch);
      expect(r!.deadLetters.map((d) => [d.reason, d.kind]).sort()).toEqual(
        [
          ['invalid_transition', 'MarketResolved'],
          ['invalid_value', 'FeeConfigChanged'],
          ['invalid_value', 'TickSizeChanged'],
          ['log_truncated', null],
          ['negative_balance', 'ReferrerClaimed'],
          ['unknown_discriminator', null],
          ['unknown_order', 'OrderCancelled'],
        ].sort(),
      );
      // The good events of the same batch, including the one after the garbage payload, applied.
      const ticks = await p.database.db.map('SELECT tick_size_bps FROM tick_size_history ORDER BY id', [], (x: { tick_size_bps: number }) => x.tick_size_bps);
      expect(ticks).toEqual([25, 50]);
      expect(await p.database.db.one('SELECT count(*)::int AS n FROM markets')).toEqual({ n: 1 });
      const stored = await p.database.db.any('SELECT reason, detail, data IS NOT NULL AS has_data FROM dead_letters ORDER BY id');
      expect(stored).toHaveLength(7);
      for (const d of stored) expect(d.detail.length).toBeGreaterThan(0);

      // Replaying the batch stores no second copy and applies nothing.
      const [again] = await p.apply(batch);
      expect(again!.deadLetters).toEqual([]);
      expect(again!.applied).toBe(0);
      expect(await p.database.db.one('SELECT count(*)::int AS n FROM dead_letters')).toEqual({ n: 7 });
    } finally {
      await p.close();
    }
  });

  it('marks a transaction without our events as processed and ignores failed ones', async () => {
    const p = await projectionDb();
    try {
      const failed = tx([init], 20, (t) => {
        t.meta!.err = { InstructionError: [1, { Custom: 1 }] };
      });
      const [r] = await p.apply([failed]);
      expect(r!.applied).toBe(0);
      expect(await p.database.db.one('SELECT failed, event_count FROM processed_transactions')).toEqual({ failed: true, event_count: 0 });
      expect(await p.database.db.one('SELECT count(*)::int AS n FROM markets')).toEqual({ n: 0 });
    } finally {
      await p.close();
    }
  });

  it('keeps u64 maxima exact end to end', async () => {
    const p = await projectionDb();
    try {
      const max = 2n ** 64n - 1n;
      await p.apply([tx([{ ...init, data: { ...init.data, marketId: max, initialCollateral: max, durationSeconds: max } }], 30)]);
      expect(await p.database.db.one('SELECT market_id, total_collateral, duration_seconds FROM markets')).toEqual({
        market_id: max.toString(), total_collateral: max.toString(), duration_seconds: max.toString(),
      });
    } finally {
      await p.close();
    }
  });
});
