import type { BatchPath } from '../../core/indexer-admin';
import type { ParsedTransaction, ProgramEvent } from '../../core/events';
import type { ChannelUpdate } from '../../core/redis/updates';
import type { EventContext } from './context';
import type { Statement } from './write';

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
  /** How its events were applied (`BATCH_PATHS`). */
  path: BatchPath;
  /** Milliseconds spent per phase, for the benchmark and slow-batch logs. */
  phases: { parse: number; ledger: number; load: number; apply: number; write: number; commit: number };
}

/** A decoded event with where it came from, and its bytes for the ledger. */
export interface NewEvent {
  ctx: EventContext;
  event: ProgramEvent;
  bytes: Uint8Array;
}

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

/** What applying a batch's events did. */
export interface Applied {
  /** Events given to the batch state (applied or dead-lettered). */
  considered: number;
  count: number;
  byKind: Map<string, number>;
  contradictions: DeadLetter[];
}

/** A batch applied before its commit, on the state the batches before it leave behind. */
export interface Ahead {
  /** The cache generation it was applied on: clearing the cache makes it stale. */
  generation: number;
  /** The batch whose end state it was applied on: it must be the last one committed. */
  after: number;
  /** The id counters it started from (the cursor must hold these) and left. */
  startIds: Record<string, number>;
  endIds: Record<string, number>;
  applied: Applied;
  /** Its ledger rows and projection writes as one statement (`combineStatements`). */
  statement: Statement;
  messages: ChannelUpdate[];
}

export function emptyResult(): BatchResult {
  return {
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
}

/** Adds the time since the last mark to a phase of `result`. */
export function phaseTimer(result: BatchResult) {
  let mark = performance.now();
  return (name: keyof BatchResult['phases']) => {
    const now = performance.now();
    result.phases[name] += now - mark;
    mark = now;
  };
}
