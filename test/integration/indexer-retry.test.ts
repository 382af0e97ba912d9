import { buildTransaction, type ProgramEvent, type RawTransaction } from '../../core/events';
import { FencedError } from '../../indexer/projection';
import { addressOf, signatureOf } from '../../simulator/ids';
import { PROGRAM_ID, projectionDb, type ProjectionDb } from '../support/indexer';

/** The projector's side of a dead-letter retry (D-164): the same handlers, once, between commits. */
describe('Projector.settleRetries', () => {
  const signer = addressOf('retry-unit-signer');
  const market = addressOf('retry-unit-market');
  let n = 0;
  const tx = (events: ProgramEvent[], slot: number): RawTransaction =>
    buildTransaction({ programId: PROGRAM_ID, signature: signatureOf(`retry-unit:${n++}`), slot, blockTime: 1_767_300_000 + slot, signer, eventAuthority: addressOf('authority'), instructionName: 'Test', events });
  const init: ProgramEvent = {
    kind: 'MarketInitialized',
    data: { market, marketId: 9n, creator: signer, oracleFeed: null, oracleFeedId: 'ef'.repeat(32), settlementMint: addressOf('mint'), durationSeconds: 60n, tStart: 1_767_300_000n, tEnd: 1_767_300_060n, maxConfidenceRatioBps: 100, initialCollateral: 0n },
  };
  const started: ProgramEvent = { kind: 'TradingStarted', data: { market, startPrice: 1n, startPriceConf: 0n, startPriceExpo: -8, publishTime: 1n } };
  let p: ProjectionDb;
  beforeEach(async () => {
    p = await projectionDb({ cacheRows: 10_000 });
  });
  afterEach(async () => p.close());

  const request = async () => {
    const { id } = await p.database.db.one("SELECT id FROM dead_letters WHERE reason = 'unknown_market'");
    await p.database.db.none("INSERT INTO dead_letter_retries (dead_letter_id, requested_by) VALUES ($1, 'admin')", [id]);
  };
  const state = async () => (await p.database.db.one<{ state: number }>('SELECT state FROM markets WHERE address = $1', [market])).state;

  it('a batch applied ahead before the retry is applied again on the retried state', async () => {
    await p.apply([tx([started], 10), tx([init], 11)]);
    await request();
    // Applied ahead on the cached state, where the market is not trading: MarketSettling would contradict it.
    const ahead = await p.projector.applyAhead(p.projector.prepare([tx([{ kind: 'MarketSettling', data: { market } }], 12)]));
    expect(ahead.ahead?.applied.contradictions.map((c) => c.reason)).toEqual(['invalid_transition']);
    const done = await p.projector.settleRetries({ writerEpoch: 0 });
    expect(done.map((d) => d.outcome)).toEqual(['applied']);
    expect(done[0]!.messages.some((m) => m.channel === 'market:9')).toBe(true);
    expect(await state()).toBe(2);
    const r = await p.projector.commit(ahead, { writerEpoch: 0 });
    expect([r.path, r.applied, r.deadLetters]).toEqual(['reapplied', 1, []]);
    expect(await state()).toBe(3);
    // Nothing pending: nothing done.
    expect(await p.projector.settleRetries({ writerEpoch: 0 })).toEqual([]);
  });

  it('settles nothing for a writer that lost its lock', async () => {
    await p.apply([tx([started], 10), tx([init], 11)]);
    await request();
    await expect(p.projector.settleRetries({ writerEpoch: 7 })).rejects.toThrow(FencedError);
    expect(await state()).toBe(1);
    expect(await p.database.db.one('SELECT outcome FROM dead_letter_retries')).toEqual({ outcome: null });
  });
});

/**
 * Dead letters live in each projection schema, and so do retry requests (D-442, D-455): a
 * request goes to the queue of the schema the API read the dead letter from, and only that
 * schema's writer settles it, so the same id in two schemas never gets mixed up.
 */
describe('dead-letter retries per projection schema', () => {
  it("the API's request names the schema it read; each schema's writer settles only its own", async () => {
    const p = await projectionDb({ cacheRows: 10_000 });
    const { createProjectionSchema, inSchema } = await import('../../core/db/projection-schema');
    const { createDatabase } = await import('../../core/db');
    const { createProjector } = await import('../../indexer/projection');
    const { requestRetry } = await import('../../server/read/queries/admin');
    await createProjectionSchema(p.database.db, 9);
    const built = createDatabase({ url: inSchema(p.tdb.url, 'p9'), poolMax: 2 });
    try {
      // The same id, a dead letter in each schema (whole transactions held back: nothing to re-apply).
      for (const db of [p.database.db, built.db]) {
        await db.none("INSERT INTO dead_letters (id, signature, event_index, reason, detail, source) VALUES (1, 'sig', -1, 'malformed', 'held back', 'test')");
      }
      const fromLive = await requestRetry(p.database.db, '1', 'admin', 'dead_letter_retry');
      const fromBuilt = await requestRetry(built.db, '1', 'admin', 'dead_letter_retry');
      // Each in its schema's own queue (D-455), ids drawn from one sequence.
      expect(await p.database.db.any("SELECT id, schema_name, 'public' AS queue FROM public.dead_letter_retries UNION ALL SELECT id, schema_name, 'p9' FROM p9.dead_letter_retries ORDER BY id")).toEqual([
        { id: fromLive!.id, schema_name: 'public', queue: 'public' },
        { id: fromBuilt!.id, schema_name: 'p9', queue: 'p9' },
      ]);
      const builtWriter = createProjector({ db: built.db, pgp: built.pgp, programId: PROGRAM_ID, source: 'test' });
      const settled = await builtWriter.settleRetries({ writerEpoch: 0 });
      expect(settled.map((d) => [d.requestId, d.outcome, d.reason])).toEqual([[Number(fromBuilt!.id), 'not_retryable', 'no_event']]);
      expect(await p.database.db.one('SELECT outcome FROM dead_letter_retries WHERE id = $1', [fromLive!.id])).toEqual({ outcome: null });
      expect((await p.projector.settleRetries({ writerEpoch: 0 })).map((d) => d.requestId)).toEqual([Number(fromLive!.id)]);
    } finally {
      await built.close();
      await p.close();
    }
  });
});
