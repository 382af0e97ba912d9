import type { IMain } from 'pg-promise';
import { DEFAULT_INDEXER_CACHE_ROWS } from '../../core/config/settings';
import type { Db } from '../../core/db';
import { parseTransaction, TransactionShapeError, type ParsedTransaction, type ProgramEvent, type RawTransaction } from '../../core/events';
import { applyEvent } from './apply';
import { RowCache } from './cache';
import { Contradiction, type EventContext } from './context';
import { loadState } from './load';
import type { AchievementDef, MarketRow } from './rows';
import { BatchState, PUBLISHED_MARKET_FIELDS } from './state';
import { pgBinaryArray } from './pg-binary';
import { combineStatements, createWriters, writeState, writeStatements, type Statement } from './write';

import type { ChannelUpdate } from '../../core/redis/updates';

export interface DeadLetter {
  signature: string;
  eventIndex: number;
  slot: number | null;
  kind: string | null;
  reason: string;
  detail: string;
  data: Uint8Array | null;
}

export interface BatchResult {
  transactions: number;
  /** Events applied for the first time. */
  applied: number;
  appliedByKind: Map<string, number>;
  /** Events already in the ledger (replays, duplicate deliveries). */
  duplicates: number;
  /** Dead letters stored for the first time by this batch. */
  deadLetters: DeadLetter[];
  /** Highest slot in the batch, or null for an empty batch. */
  slot: number | null;
  messages: ChannelUpdate[];
  /**
   * How its events were applied: `ahead` (before the commit, D-62), `reapplied` (applied ahead
   * on a state that did not come to be, or holding events already in the ledger, so applied
   * again inside the transaction) or `in_transaction` (not applied ahead).
   */
  path: 'ahead' | 'reapplied' | 'in_transaction';
  /** Milliseconds spent per phase, for the benchmark and slow-batch logs. */
  phases: { parse: number; ledger: number; load: number; apply: number; write: number; commit: number };
}

/** Thrown when another process became the writer: this one must stop writing. */
export class FencedError extends Error {
  override name = 'FencedError';
}

interface NewEvent {
  ctx: EventContext;
  event: ProgramEvent;
  bytes: Uint8Array;
}

const UNIQUE_VIOLATION = '23505';

const jsonValue = (v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v instanceof Date ? v.toISOString() : v);

/** A batch decoded and keyed, not yet written: built while the previous batch commits. */
export interface PreparedBatch {
  result: BatchResult;
  parsed: ParsedTransaction[];
  candidates: DeadLetter[];
  /** The batch's decoded events in chain order: the ledger rows and, if new, what is applied. */
  events: NewEvent[];
  /** Its place in the order batches went through `applyAhead` (or, without it, were committed). */
  seq?: number;
  /** Set by `applyAhead`: the batch applied on the row cache, ready to be written. */
  ahead?: Ahead;
}

/** A batch applied before its commit, on the state the batches before it leave behind. */
interface Ahead {
  /** The cache generation it was applied on: clearing the cache makes it stale. */
  generation: number;
  /** The batch whose end state it was applied on: it must be the last one committed. */
  after: number;
  /** The id counters it started from (the cursor must hold these) and left. */
  startIds: Record<string, number>;
  endIds: Record<string, number>;
  applied: Applied;
  statements: Statement[];
  messages: ChannelUpdate[];
}

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
  /** Rows in the row cache now. */
  cachedRows(): number;
}

function phaseTimer(result: BatchResult) {
  let mark = performance.now();
  return (name: keyof BatchResult['phases']) => {
    const now = performance.now();
    result.phases[name] += now - mark;
    mark = now;
  };
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
  let achievements: AchievementDef[] | undefined;
  const loadAchievements = (q: Pick<Db, 'map'>) =>
    q.map('SELECT id, code, metric, threshold FROM achievements ORDER BY id', [], (r: { id: number; code: string; metric: string; threshold: number }) => ({
      id: r.id,
      code: r.code,
      metric: r.metric,
      threshold: r.threshold,
    }));

  // Applying ahead (D-62). The cache holds the committed rows plus what the batches applied
  // ahead and not yet committed will write; `generation` changes whenever that stops being true.
  const cacheRows = opts.cacheRows ?? DEFAULT_INDEXER_CACHE_ROWS;
  const cache = cacheRows > 0 ? new RowCache(cacheRows) : undefined;
  let generation = 0;
  /** Id counters after the last batch the cache reflects; unknown after a clear. */
  let aheadIds: Record<string, number> | undefined;
  let lastSeq = 0;
  let lastCommitted = 0;
  /** The last batch that went through applyAhead. */
  let tail: { seq: number; ahead: Ahead | undefined } | undefined;
  let inflight: Promise<unknown> | undefined;

  function clearCache(): void {
    cache?.clear();
    generation += 1;
    aheadIds = undefined;
  }

  /** True when the cache holds what every batch before the next one leaves behind. */
  function coherent(): boolean {
    return !tail || tail.seq === lastCommitted || tail.ahead?.generation === generation;
  }

  const dlCs = new opts.pgp.helpers.ColumnSet(['signature', 'event_index', 'slot', 'kind', 'reason', 'detail', 'data', 'source'], { table: 'dead_letters' });

  function prepare(transactions: RawTransaction[]): PreparedBatch {
    const p = startPrepare();
    for (const raw of transactions) p.add(raw);
    return p.finish();
  }

  async function prepareInSlices(transactions: RawTransaction[], sliceMs = SLICE_MS): Promise<PreparedBatch> {
    const p = startPrepare();
    const slicer = timeSlicer(sliceMs);
    for (const raw of transactions) {
      p.add(raw);
      if (slicer.due()) await slicer.pause();
    }
    return p.finish();
  }

  function startPrepare() {
    const result: BatchResult = {
      transactions: 0,
      applied: 0,
      appliedByKind: new Map(),
      duplicates: 0,
      deadLetters: [],
      slot: null,
      messages: [],
      path: 'in_transaction',
      phases: { parse: 0, ledger: 0, load: 0, apply: 0, write: 0, commit: 0 },
    };
    const phase = phaseTimer(result);
    const parsed: ParsedTransaction[] = [];
    const candidates: DeadLetter[] = [];
    const seen = new Set<string>();
    const add = (raw: RawTransaction) => {
      let p: ParsedTransaction;
      try {
        p = parseTransaction(raw, opts.programId);
      } catch (err) {
        const signature = raw?.transaction?.signatures?.[0];
        if (typeof signature !== 'string' || !(err instanceof TransactionShapeError)) throw err;
        candidates.push({ signature, eventIndex: -1, slot: null, kind: null, reason: 'malformed_transaction', detail: err.message, data: null });
        return;
      }
      if (seen.has(p.signature)) return;
      seen.add(p.signature);
      parsed.push(p);
    };
    return { add, finish: (): PreparedBatch => finishPrepare(result, phase, parsed, candidates) };
  }

  function finishPrepare(result: BatchResult, phase: ReturnType<typeof phaseTimer>, parsed: ParsedTransaction[], candidates: DeadLetter[]): PreparedBatch {
    // Sources deliver in order; a stable sort by slot guards against a merged delivery.
    parsed.sort((a, b) => a.slot - b.slot);
    result.transactions = parsed.length;
    if (parsed.length) result.slot = parsed[parsed.length - 1]!.slot;

    const events: NewEvent[] = [];
    for (const p of parsed) {
      const blockTime = new Date((p.blockTime ?? 0) * 1000);
      for (const inv of p.invalid) {
        candidates.push({ signature: p.signature, eventIndex: inv.index, slot: p.slot, kind: null, reason: inv.reason, detail: inv.detail, data: inv.bytes });
      }
      // Events after a cut log are lost; applying part of a transaction would be wrong, so a
      // truncated transaction that emitted through logs is held back whole.
      if (p.truncated && (p.events.some((e) => e.via === 'log') || p.events.length === 0)) {
        candidates.push({ signature: p.signature, eventIndex: -1, slot: p.slot, kind: null, reason: 'log_truncated', detail: 'the validator truncated the log; events may be missing', data: null });
        continue;
      }
      if (p.blockTime === null && p.events.length) {
        candidates.push({ signature: p.signature, eventIndex: -1, slot: p.slot, kind: null, reason: 'missing_block_time', detail: 'the transaction has no block time', data: null });
        continue;
      }
      for (const e of p.events) {
        events.push({ ctx: { signature: p.signature, eventIndex: e.index, slot: p.slot, blockTime }, event: e.event, bytes: e.bytes });
      }
    }

    phase('parse');
    return { result, parsed, candidates, events };
  }

  async function applyAhead(batch: PreparedBatch): Promise<PreparedBatch> {
    if (!cache || batch.seq !== undefined) return batch;
    while (!coherent() && inflight) await inflight.catch(() => {});
    let after = tail?.seq ?? lastCommitted;
    if (!coherent()) {
      // The last batch will never be committed (its commit failed or was never asked for): its
      // effects in the cache never landed. Start again from the tables; should it be committed
      // after all, the check of `after` at commit time catches it.
      clearCache();
      after = lastCommitted;
    }
    if (cache.size() > cache.maxRows) {
      // Rows of batches not yet committed must stay, so the cache empties only between commits.
      while (inflight) await inflight.catch(() => {});
      clearCache();
      after = lastCommitted;
    }
    batch.seq = ++lastSeq;
    tail = { seq: batch.seq, ahead: undefined };
    const gen = generation;
    const phase = phaseTimer(batch.result);
    try {
      achievements ??= await loadAchievements(opts.db);
      aheadIds ??= (await opts.db.one<{ next_ids: Record<string, number> }>('SELECT next_ids FROM indexer_cursor WHERE id = 1')).next_ids;
      if (gen !== generation) return batch;
      const st = new BatchState({ ...aheadIds }, achievements);
      await loadState(opts.db, st, batch.events.map((f) => f.event), cache);
      phase('load');
      if (gen !== generation) return batch;
      const startIds = { ...aheadIds };
      const applied = await applyAll(st, batch.events);
      finalizeBook(st);
      phase('apply');
      if (gen !== generation) {
        // A commit failed meanwhile and cleared the cache, whose rows this batch changed.
        clearCache();
        return batch;
      }
      cache.absorb(st, batch.seq);
      aheadIds = st.idCounters();
      const statements: Statement[] = [];
      const slicer = timeSlicer(SLICE_MS);
      for (const q of writeStatements(writers, st)) {
        statements.push(q);
        if (slicer.due()) await slicer.pause();
      }
      phase('write');
      const slot = batch.result.slot;
      const ahead: Ahead = { generation: gen, after, startIds, endIds: aheadIds, applied, statements, messages: slot === null ? [] : buildMessages(st, slot) };
      batch.ahead = ahead;
      tail.ahead = ahead;
      return batch;
    } catch (err) {
      // Rows of the cache may be half changed.
      clearCache();
      throw err;
    }
  }

  async function commit(batch: PreparedBatch, opts: { writerEpoch: number }): Promise<BatchResult> {
    const run = commitOnce(batch, opts);
    inflight = run;
    try {
      return await run;
    } catch (err) {
      clearCache();
      throw err;
    } finally {
      if (inflight === run) inflight = undefined;
    }
  }

  async function commitOnce(batch: PreparedBatch, { writerEpoch }: { writerEpoch: number }): Promise<BatchResult> {
    const { result, parsed, candidates, events } = batch;
    const seq = (batch.seq ??= ++lastSeq);
    const phase = phaseTimer(result);
    let ahead = batch.ahead?.generation === generation && batch.ahead.after === lastCommitted ? batch.ahead : undefined;
    // Applied on a state that will not be: the cache holds its effects, which will not land as applied.
    if (batch.ahead && !ahead) clearCache();
    const ledgerParts = ledgerStatements(parsed, events);
    const ledger = combineStatements(ledgerParts);

    const outcome = await opts.db.tx('index-batch', async (t) => {
      const cursor = await t.one<{ writer_epoch: string; next_ids: Record<string, number> }>(
        'SELECT writer_epoch, next_ids FROM indexer_cursor WHERE id = 1 FOR UPDATE',
      );
      if (Number(cursor.writer_epoch) !== writerEpoch) {
        throw new FencedError(`writer epoch is ${cursor.writer_epoch}, this process holds ${writerEpoch}`);
      }
      if (ahead && !sameIds(cursor.next_ids, ahead.startIds)) {
        ahead = undefined;
        clearCache();
      }
      achievements ??= await loadAchievements(t);
      const fresh = () => new BatchState({ ...cursor.next_ids }, achievements!);

      // The ledger insert is one plain statement (no conflict handling, nothing returned): the
      // usual batch is all new. A duplicate makes it fail; the batch is then sorted out row by row.
      await t.none('SAVEPOINT ledger');
      const insertLedger = (q: Statement) =>
        t.none(q as never).then(
          () => true,
          // In the combined statement another table's (signature, event index) key may be
          // the first to find the repeat. A unique violation with no repeat in the ledger fails
          // again, and loudly, in the row-by-row path.
          (err: { code?: string }) => {
            if (err.code !== UNIQUE_VIOLATION) throw err;
            return false;
          },
        );
      let st: BatchState | undefined;
      let applied: Applied | undefined;
      if (ahead) {
        // Ledger and projections in one statement: if an event is already in the ledger,
        // none of it happened.
        if (await insertLedger(combineStatements([...ledgerParts, ...ahead.statements]))) {
          applied = ahead.applied;
        } else {
          ahead = undefined;
          clearCache();
        }
        phase('ledger');
      } else {
        // Loaded and applied in memory while PostgreSQL inserts the ledger rows.
        st = fresh();
        await loadState(t, st, events.map((f) => f.event));
        phase('load');
        const inserted = insertLedger(ledger);
        inserted.catch(() => {}); // a failure is awaited below, after the apply
        try {
          applied = await applyAll(st, events);
        } catch (err) {
          await inserted.catch(() => {}); // the transaction's rollback must not queue behind it
          throw err;
        }
        phase('apply');
        if (!(await inserted)) applied = undefined;
        phase('ledger');
      }
      if (applied) {
        await t.none('RELEASE SAVEPOINT ledger');
      } else {
        await t.none('ROLLBACK TO SAVEPOINT ledger');
        const rows = await t.any<{ signature: string; event_index: number }>(
          { text: `${ledger.text} ON CONFLICT DO NOTHING RETURNING signature, event_index`, values: ledger.values } as never,
        );
        // RETURNING order is not guaranteed: walk the batch in chain order instead.
        const created = new Set(rows.map((r) => `${r.signature}:${r.event_index}`));
        const unseen = events.filter((e) => created.has(`${e.ctx.signature}:${e.ctx.eventIndex}`));
        phase('ledger');
        st = fresh();
        await loadState(t, st, unseen.map((f) => f.event));
        phase('load');
        applied = await applyAll(st, unseen);
        phase('apply');
      }
      result.duplicates = events.length - applied.considered;
      result.applied = applied.count;
      result.appliedByKind = applied.byKind;
      // A new array: the prepared batch stays as it was, whatever happens to this attempt.
      const letters = [...candidates, ...applied.contradictions];
      if (st) {
        finalizeBook(st);
        await writeState(t, writers, st);
      }

      if (letters.length) {
        const stored = await t.map(
          opts.pgp.helpers.insert(
            letters.map((d) => ({ signature: d.signature, event_index: d.eventIndex, slot: d.slot, kind: d.kind, reason: d.reason, detail: d.detail, data: d.data ? Buffer.from(d.data) : null, source })),
            dlCs,
          ) + ' ON CONFLICT DO NOTHING RETURNING signature, event_index',
          [],
          (r: { signature: string; event_index: number }) => `${r.signature}:${r.event_index}`,
        );
        const storedSet = new Set(stored);
        result.deadLetters = letters.filter((d) => storedSet.has(`${d.signature}:${d.eventIndex}`));
      }

      const last = parsed[parsed.length - 1];
      await t.none(
        `UPDATE indexer_cursor SET
           last_processed_slot = GREATEST(last_processed_slot, $1),
           last_signature = COALESCE($2, last_signature),
           last_block_time = COALESCE($3, last_block_time),
           last_activity_at = now(),
           events_applied = events_applied + $4,
           next_ids = $5
         WHERE id = 1`,
        [result.slot ?? 0, last?.signature ?? null, last?.blockTime ? new Date(last.blockTime * 1000) : null, result.applied, st ? st.idCounters() : ahead!.endIds],
      );
      phase('write');
      return { st, ahead };
    });
    phase('commit');

    lastCommitted = seq;
    result.path = outcome.ahead ? 'ahead' : batch.ahead ? 'reapplied' : 'in_transaction';
    if (outcome.st && cache) {
      // Rows of later batches applied ahead may be in the cache: this batch's would not agree.
      if (tail && tail.seq !== seq) clearCache();
      else {
        cache.absorb(outcome.st, seq);
        aheadIds = outcome.st.idCounters();
      }
    }
    cache?.committed(seq);
    if (result.slot !== null) result.messages = outcome.ahead ? outcome.ahead.messages : buildMessages(outcome.st!, result.slot);
    return result;
  }

  return {
    prepare,
    prepareInSlices,
    applyAhead,
    commit,
    applyBatch: async (txs, o) => commit(await applyAhead(prepare(txs)), o),
    cachedRows: () => cache?.size() ?? 0,
  };
}

/**
 * The ledger insert: the batch's transactions (`processed_transactions`, where a repeat is
 * harmless) and its events (`raw_events`, last, where a repeat is the signal to sort the batch
 * out).
 */
function ledgerStatements(parsed: ParsedTransaction[], events: NewEvent[]): Statement[] {
  return [
    {
      text: `INSERT INTO processed_transactions (signature, slot, block_time, event_count, failed)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::int[], $5::boolean[])
             ON CONFLICT DO NOTHING`,
      values: [
        pgBinaryArray(parsed, 'text', (p) => p.signature),
        pgBinaryArray(parsed, 'int8', (p) => p.slot),
        pgBinaryArray(parsed, 'timestamptz', (p) => (p.blockTime === null ? null : new Date(p.blockTime * 1000))),
        pgBinaryArray(parsed, 'int4', (p) => p.events.length + p.invalid.length),
        pgBinaryArray(parsed, 'bool', (p) => p.failed),
      ],
    },
    {
      text: `INSERT INTO raw_events (signature, event_index, slot, block_time, kind, data)
             SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::timestamptz[], $5::text[], $6::bytea[])`,
      values: [
        pgBinaryArray(events, 'text', (e) => e.ctx.signature),
        pgBinaryArray(events, 'int4', (e) => e.ctx.eventIndex),
        pgBinaryArray(events, 'int8', (e) => e.ctx.slot),
        pgBinaryArray(events, 'timestamptz', (e) => e.ctx.blockTime),
        pgBinaryArray(events, 'text', (e) => e.event.kind),
        pgBinaryArray(events, 'bytea', (e) => e.bytes),
      ],
    },
  ];
}

function sameIds(a: Record<string, number>, b: Record<string, number>): boolean {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if ((a[k] ?? 1) !== (b[k] ?? 1)) return false;
  return true;
}

interface Applied {
  /** Events given to the batch state (applied or dead-lettered). */
  considered: number;
  count: number;
  byKind: Map<string, number>;
  contradictions: DeadLetter[];
}

/**
 * Applies events in chain order, yielding to the event loop between slices so that the
 * ledger insert in flight is answered (and the next batch's parse goes on) meanwhile.
 */
async function applyAll(st: BatchState, events: NewEvent[]): Promise<Applied> {
  const out: Applied = { considered: events.length, count: 0, byKind: new Map(), contradictions: [] };
  const slicer = timeSlicer(SLICE_MS);
  for (const f of events) {
    try {
      applyEvent(st, f.event, f.ctx);
      out.count += 1;
      out.byKind.set(f.event.kind, (out.byKind.get(f.event.kind) ?? 0) + 1);
    } catch (err) {
      if (!(err instanceof Contradiction)) throw err;
      out.contradictions.push({ signature: f.ctx.signature, eventIndex: f.ctx.eventIndex, slot: f.ctx.slot, kind: f.event.kind, reason: err.reason, detail: err.message, data: f.bytes });
    }
    if (slicer.due()) await slicer.pause();
  }
  return out;
}

/**
 * The longest stretch of CPU work between two turns of the event loop. The commit in flight
 * waits for its query results while the next batch is parsed on the same thread; with slices
 * of 100 transactions (several milliseconds here), every one of the commit's ~30 statements
 * waited that long for its turn and PostgreSQL sat idle meanwhile.
 */
const SLICE_MS = 1;

function timeSlicer(budgetMs: number) {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= budgetMs,
    async pause(): Promise<void> {
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    },
  };
}

/** Best bid and ask of every market whose book changed, from its level rows. */
function finalizeBook(st: BatchState): void {
  if (!st.bookTouched.size) return;
  const best = new Map<string, { bid: number | null; ask: number | null }>();
  for (const m of st.bookTouched) best.set(m, { bid: null, ask: null });
  for (const l of st.levels.rows.values()) {
    const b = best.get(l.marketAddress);
    if (!b || l.quantity <= 0n) continue;
    if (l.bookSide === 0) b.bid = b.bid === null ? l.priceBps : Math.max(b.bid, l.priceBps);
    else b.ask = b.ask === null ? l.priceBps : Math.min(b.ask, l.priceBps);
  }
  for (const [address, b] of best) {
    const m = st.markets.get(address);
    if (!m || (m.bestBid === b.bid && m.bestAsk === b.ask)) continue;
    m.bestBid = b.bid;
    m.bestAsk = b.ask;
    st.markets.touch(address);
  }
}

/** One message per changed market field, top-of-book change and touched position. */
function buildMessages(st: BatchState, slot: number): ChannelUpdate[] {
  const out: ChannelUpdate[] = [];
  for (const [address, before] of st.marketsBefore) {
    const m = st.markets.get(address) as MarketRow | undefined;
    if (!m) continue;
    const marketId = m.marketId.toString();
    for (const field of PUBLISHED_MARKET_FIELDS) {
      const value = m[field];
      if (before && before[field] === value) continue;
      if (!before && (value === null || value === 0 || value === 0n)) continue;
      out.push({ channel: `market:${marketId}`, slot, data: { marketId, field, value: jsonValue(value) } });
    }
    if (!before || before.bestBid !== m.bestBid || before.bestAsk !== m.bestAsk) {
      if (before || m.bestBid !== null || m.bestAsk !== null) {
        out.push({ channel: `orderbook:${marketId}`, slot, data: { marketId, bestBid: m.bestBid, bestAsk: m.bestAsk } });
      }
    }
  }
  for (const address of st.touchedPositions) {
    const p = st.positions.get(address);
    const m = p && st.markets.get(p.marketAddress);
    if (!p || !m) continue;
    out.push({
      channel: `positions:${p.owner}`,
      slot,
      data: { marketId: m.marketId.toString(), owner: p.owner, yesShares: p.yesShares.toString(), noShares: p.noShares.toString() },
    });
  }
  return out;
}
