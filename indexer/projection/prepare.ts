import { parseTransaction, TransactionShapeError, type ParsedTransaction, type RawTransaction } from '../../core/events';
import { emptyResult, phaseTimer, type DeadLetter, type NewEvent, type PreparedBatch } from './batch';
import type { SourceTransaction } from '../sources/missing-body';
import { timeSlicer } from './slices';

/**
 * Parsing, decoding and keying a batch: pure CPU work, no database. Malformed transactions and
 * transactions that cannot be applied whole become dead-letter candidates.
 */
export function createPreparer(programId: string) {
  function start() {
    const result = emptyResult();
    const phase = phaseTimer(result);
    const parsed: ParsedTransaction[] = [];
    const candidates: DeadLetter[] = [];
    const seen = new Set<string>();
    const add = (raw: RawTransaction) => {
      // A listed signature whose body the provider never served (indexer/sources/missing-body.ts, D-463).
      const missing = (raw as SourceTransaction).unavailable;
      if (missing) {
        candidates.push({ signature: raw.transaction.signatures[0]!, eventIndex: -1, slot: raw.slot, kind: null, reason: missing.reason, detail: missing.detail, data: null });
        return;
      }
      let p: ParsedTransaction;
      try {
        p = parseTransaction(raw, programId);
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
    const finish = (): PreparedBatch => {
      const events = chainEvents(parsed, candidates);
      result.transactions = parsed.length;
      if (parsed.length) result.slot = parsed[parsed.length - 1]!.slot;
      phase('parse');
      return { result, parsed, candidates, events };
    };
    return { add, finish };
  }

  return {
    prepare(transactions: RawTransaction[]): PreparedBatch {
      const p = start();
      for (const raw of transactions) p.add(raw);
      return p.finish();
    },
    async prepareInSlices(transactions: RawTransaction[], sliceMs?: number): Promise<PreparedBatch> {
      const p = start();
      const slicer = timeSlicer(sliceMs);
      for (const raw of transactions) {
        p.add(raw);
        if (slicer.due()) await slicer.pause();
      }
      return p.finish();
    },
  };
}

/** The batch's events in chain order (`parsed` is sorted in place); what cannot be applied goes to `candidates`. */
function chainEvents(parsed: ParsedTransaction[], candidates: DeadLetter[]): NewEvent[] {
  // Sources deliver in order; a stable sort by slot guards against a merged delivery.
  parsed.sort((a, b) => a.slot - b.slot);
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
  return events;
}
