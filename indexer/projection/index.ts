import type { IMain } from 'pg-promise';
import { DEFAULT_INDEXER_CACHE_ROWS } from '../../core/config/settings';
import type { Db } from '../../core/db';
import type { RawTransaction } from '../../core/events';
import { applyEvents } from './apply-events';
import { phaseTimer, type Ahead, type Applied, type BatchResult, type NewEvent, type PreparedBatch } from './batch';
import { finalizeBook } from './book';
import { advanceCursor, lockCursor, sameIds } from './cursor';
import { storeDeadLetters } from './dead-letters';
import { insertLedger, insertLedgerRowByRow, ledgerStatements } from './ledger';
import { loadState } from './load';
import { buildMessages } from './messages';
import { Pipeline } from './pipeline';
import { createPreparer } from './prepare';
import { settleNextRetry, type RetryDone } from './retry';
import type { AchievementDef } from './rows';
import { timeSlicer } from './slices';
import { BatchState } from './state';
import { combineStatements, createWriters, writeState, writeStatements, type Statement } from './write';

export type { BatchResult, DeadLetter, PreparedBatch } from './batch';
export { FencedError } from './cursor';
export type { RetryDone } from './retry';

/**
 * The projector, step by step:
 * - `prepare`: parse, decode and key a batch (pure CPU, `prepare.ts`);
 * - `applyAhead`: apply it on the row cache while the previous batch commits (`pipeline.ts`);
 * - `commit`: one transaction: fence (`cursor.ts`) → ledger (`ledger.ts`) → apply, unless applied
 *   ahead (`apply-events.ts`, `book.ts`) → write (`write.ts`) → dead letters → cursor; then the
 *   batch's messages (`messages.ts`) are handed to the caller to publish.
 */
export interface Projector {
  /** Pure CPU work (parse, decode, key): needs no database. */
  prepare(transactions: RawTransaction[]): PreparedBatch;
  /**
   * The same, yielding to the event loop whenever `sliceMs` of work went by, so that a commit
   * in flight keeps receiving its query results while the next batch is parsed.
   */
  prepareInSlices(transactions: RawTransaction[], sliceMs?: number): Promise<PreparedBatch>;
  /**
   * Applies a prepared batch on the state the batches before it leave behind (the row cache,
   * and PostgreSQL for rows it does not hold), so that its commit only writes. Runs while the
   * previous batch commits; waits for that commit when the cache cannot say what it leaves.
   */
  applyAhead(batch: PreparedBatch): Promise<PreparedBatch>;
  /** The one database transaction: ledger, projections, cursor. */
  commit(batch: PreparedBatch, opts: { writerEpoch: number }): Promise<BatchResult>;
  applyBatch(transactions: RawTransaction[], opts: { writerEpoch: number }): Promise<BatchResult>;
  /**
   * Settles the pending dead-letter retry requests (D-164), each in a transaction of its own,
   * one at a time with the commits (never inside one), fenced like them.
   */
  settleRetries(opts: { writerEpoch: number }): Promise<RetryDone[]>;
  /** Rows in the row cache now. */
  cachedRows(): number;
}

/**
 * Applies ordered batches of program transactions exactly once: in one PostgreSQL
 * transaction it inserts the raw events (the ledger), applies only those that were new, and
 * advances the cursor. Nothing is published here: the caller publishes `messages` after the
 * commit returned.
 */
export function createProjector(opts: {
  db: Db;
  pgp: IMain;
  programId: string;
  source?: string;
  /** Rows kept across batches for `applyAhead`; 0 turns applying ahead off. */
  cacheRows?: number;
}): Projector {
  const writers = createWriters();
  const source = opts.source ?? 'unknown';
  const preparer = createPreparer(opts.programId);
  const pipeline = new Pipeline(opts.cacheRows ?? DEFAULT_INDEXER_CACHE_ROWS);
  let achievements: AchievementDef[] | undefined;
  const achievementsOf = async (q: Pick<Db, 'map'>) =>
    (achievements ??= await q.map('SELECT id, code, metric, threshold FROM achievements ORDER BY id', [], (r: AchievementDef) => ({
      id: r.id,
      code: r.code,
      metric: r.metric,
      threshold: r.threshold,
    })));

  async function applyAhead(batch: PreparedBatch): Promise<PreparedBatch> {
    const { cache } = pipeline;
    if (!cache || batch.seq !== undefined) return batch;
    while (!pipeline.coherent() && pipeline.inflight) await pipeline.inflight.catch(() => {});
    let after = pipeline.tail?.seq ?? pipeline.lastCommitted;
    if (!pipeline.coherent()) {
      // The last batch will never be committed (its commit failed or was never asked for): its
      // effects in the cache never landed. Start again from the tables; should it be committed
      // after all, the check of `after` at commit time catches it.
      pipeline.clear();
      after = pipeline.lastCommitted;
    }
    if (cache.size() > cache.maxRows) {
      // Rows of batches not yet committed must stay, so the cache empties only between commits.
      await pipeline.settle();
      pipeline.clear();
      after = pipeline.lastCommitted;
    }
    batch.seq = ++pipeline.lastSeq;
    const tail: NonNullable<Pipeline['tail']> = { seq: batch.seq, ahead: undefined };
    pipeline.tail = tail;
    const gen = pipeline.generation;
    const phase = phaseTimer(batch.result);
    try {
      const defs = await achievementsOf(opts.db);
      pipeline.aheadIds ??= (await opts.db.one<{ next_ids: Record<string, number> }>('SELECT next_ids FROM indexer_cursor WHERE id = 1')).next_ids;
      if (gen !== pipeline.generation) return batch;
      const startIds = { ...pipeline.aheadIds };
      const st = new BatchState({ ...startIds }, defs);
      await loadState(opts.db, st, batch.events.map((f) => f.event), cache);
      phase('load');
      if (gen !== pipeline.generation) return batch;
      const applied = await applyEvents(st, batch.events);
      finalizeBook(st);
      phase('apply');
      if (gen !== pipeline.generation) {
        // A commit failed meanwhile and cleared the cache, whose rows this batch changed.
        pipeline.clear();
        return batch;
      }
      cache.absorb(st, batch.seq);
      pipeline.aheadIds = st.idCounters();
      const statements: Statement[] = [];
      const slicer = timeSlicer();
      for (const q of writeStatements(writers, st)) {
        statements.push(q);
        if (slicer.due()) await slicer.pause();
      }
      // The ledger rows and the projections as the one statement the commit sends: encoded
      // here, while the previous batch commits, not between two commits.
      const statement = combineStatements([...ledgerStatements(batch.parsed, batch.events), ...statements]);
      phase('write');
      const slot = batch.result.slot;
      const ahead: Ahead = { generation: gen, after, startIds, endIds: pipeline.aheadIds, applied, statement, messages: slot === null ? [] : buildMessages(st, slot) };
      batch.ahead = ahead;
      tail.ahead = ahead;
      return batch;
    } catch (err) {
      // Rows of the cache may be half changed.
      pipeline.clear();
      throw err;
    }
  }

  // Commits and retries take turns: a retry writes the projection too, so it must neither run
  // inside a commit nor let a batch applied ahead of it commit on the state before it.
  let turn: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(f: () => Promise<T>): Promise<T> => {
    const run = turn.then(f, f);
    turn = run.catch(() => {});
    return run;
  };

  async function settleRetries({ writerEpoch }: { writerEpoch: number }): Promise<RetryDone[]> {
    // Asked at every heartbeat: nothing pending (the usual answer, from a partial index) costs
    // the commits no turn and the cursor row no lock.
    if (!(await opts.db.one<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM dead_letter_retries WHERE outcome IS NULL AND schema_name = current_schema()) AS any')).any) return [];
    return exclusive(async () => {
      const out: RetryDone[] = [];
      try {
        for (;;) {
          const defs = await achievementsOf(opts.db);
          const done = await opts.db.tx('dead-letter-retry', (t) => settleNextRetry(t, { writerEpoch, writers, achievements: defs }));
          if (!done) return out;
          out.push(done);
        }
      } finally {
        // What the cache holds and the batches applied ahead were worked out on the state
        // before the retry: applied again on the tables from here on (D-62's generation).
        if (out.some((d) => d.outcome === 'applied')) pipeline.clear();
      }
    });
  }

  async function commit(batch: PreparedBatch, o: { writerEpoch: number }): Promise<BatchResult> {
    const run = exclusive(() => commitOnce(batch, o));
    pipeline.inflight = run;
    try {
      return await run;
    } catch (err) {
      pipeline.clear();
      throw err;
    } finally {
      if (pipeline.inflight === run) pipeline.inflight = undefined;
    }
  }

  async function commitOnce(batch: PreparedBatch, { writerEpoch }: { writerEpoch: number }): Promise<BatchResult> {
    const { result, parsed, candidates, events } = batch;
    const seq = (batch.seq ??= ++pipeline.lastSeq);
    const phase = phaseTimer(result);
    let ahead = pipeline.usable(batch.ahead);
    // Applied on a state that will not be: the cache holds its effects, which will not land as applied.
    if (batch.ahead && !ahead) pipeline.clear();

    const outcome = await opts.db.tx('index-batch', async (t) => {
      // Sets the savepoint `ledger` too, in the same round trip.
      const startIds = await lockCursor(t, writerEpoch);
      if (ahead && !sameIds(startIds, ahead.startIds)) {
        ahead = undefined;
        pipeline.clear();
      }
      const defs = await achievementsOf(t);
      const fresh = () => new BatchState({ ...startIds }, defs);

      let st: BatchState | undefined;
      let applied: Applied | undefined;
      if (ahead) {
        // Ledger and projections in one statement: if an event is already in the ledger,
        // none of it happened.
        if (await insertLedger(t, ahead.statement)) applied = ahead.applied;
        else {
          ahead = undefined;
          pipeline.clear();
        }
        phase('ledger');
      } else {
        // Loaded and applied in memory while PostgreSQL inserts the ledger rows.
        st = fresh();
        await loadState(t, st, events.map((f) => f.event));
        phase('load');
        const inserted = insertLedger(t, combineStatements(ledgerStatements(parsed, events)));
        inserted.catch(() => {}); // a failure is awaited below, after the apply
        try {
          applied = await applyEvents(st, events);
        } catch (err) {
          await inserted.catch(() => {}); // the transaction's rollback must not queue behind it
          throw err;
        }
        phase('apply');
        if (!(await inserted)) applied = undefined;
        phase('ledger');
      }
      // The savepoint is not released: the commit ends it with the transaction, and a RELEASE
      // would cost the batch a round trip (D-175).
      if (!applied) {
        // Some events were in the ledger already: apply only those that were not.
        await t.none('ROLLBACK TO SAVEPOINT ledger');
        const unseen = await insertLedgerRowByRow(t, parsed, events);
        phase('ledger');
        st = fresh();
        applied = await loadAndApply(t, st, unseen, phase);
      }
      result.duplicates = events.length - applied.considered;
      result.applied = applied.count;
      result.appliedByKind = applied.byKind;
      if (st) {
        finalizeBook(st);
        await writeState(t, writers, st);
      }
      // A new array: the prepared batch stays as it was, whatever happens to this attempt.
      result.deadLetters = await storeDeadLetters(t, [...candidates, ...applied.contradictions], source);
      await advanceCursor(t, result, parsed, st ? st.idCounters() : ahead!.endIds);
      phase('write');
      return { st, ahead };
    });
    phase('commit');

    pipeline.lastCommitted = seq;
    result.path = outcome.ahead ? 'ahead' : batch.ahead ? 'reapplied' : 'in_transaction';
    const { cache } = pipeline;
    if (outcome.st && cache) {
      // Rows of later batches applied ahead may be in the cache: this batch's would not agree.
      if (pipeline.tail && pipeline.tail.seq !== seq) pipeline.clear();
      else {
        cache.absorb(outcome.st, seq);
        pipeline.aheadIds = outcome.st.idCounters();
      }
    }
    cache?.committed(seq);
    if (result.slot !== null) result.messages = outcome.ahead ? outcome.ahead.messages : buildMessages(outcome.st!, result.slot);
    return result;
  }

  return {
    prepare: preparer.prepare,
    prepareInSlices: preparer.prepareInSlices,
    applyAhead,
    commit,
    applyBatch: async (txs, o) => commit(await applyAhead(preparer.prepare(txs)), o),
    settleRetries,
    cachedRows: () => pipeline.cache?.size() ?? 0,
  };
}

async function loadAndApply(t: Parameters<typeof loadState>[0], st: BatchState, events: NewEvent[], phase: ReturnType<typeof phaseTimer>): Promise<Applied> {
  await loadState(t, st, events.map((f) => f.event));
  phase('load');
  const applied = await applyEvents(st, events);
  phase('apply');
  return applied;
}
