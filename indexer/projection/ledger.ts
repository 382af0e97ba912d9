import type { ITask } from 'pg-promise';
import type { ParsedTransaction } from '../../core/events';
import type { NewEvent } from './batch';
import { pgBinaryArray } from './pg-binary';
import { combineStatements, type Statement } from './write';

const UNIQUE_VIOLATION = '23505';

/**
 * The ledger insert: the batch's transactions (`processed_transactions`) and its events
 * (`raw_events`, last). On the usual path (`repeats` false) both are plain inserts: a batch is
 * usually all new, and a plain insert checks each key once where `ON CONFLICT` probes the
 * index before inserting and confirms after (D-121). A repeat of either, an event-less
 * transaction's included, is then a unique violation: the signal to sort the batch out row by
 * row (`insertLedgerRowByRow`), where the transactions insert with `repeats` true skips them.
 */
export function ledgerStatements(parsed: ParsedTransaction[], events: NewEvent[], repeats = false): Statement[] {
  return [
    {
      text: `INSERT INTO processed_transactions (signature, slot, block_time, event_count, failed)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::timestamptz[], $4::int[], $5::boolean[])${repeats ? ' ON CONFLICT DO NOTHING' : ''}`,
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
             SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::timestamptz[], $5::text[], $6::bytea[])${repeats ? ' ON CONFLICT DO NOTHING RETURNING signature, event_index' : ''}`,
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

/**
 * Runs a statement holding the ledger insert as one plain statement (no conflict handling,
 * nothing returned): the usual batch is all new. Resolves false when an event was already in
 * the ledger; the caller then rolls back to its savepoint and sorts the batch out row by row.
 */
export function insertLedger(t: ITask<unknown>, q: Statement): Promise<boolean> {
  return t.none(q as never).then(
    () => true,
    // In a combined statement another table's (signature, event index) key may be the first
    // to find the repeat. A unique violation with no repeat in the ledger fails again, and
    // loudly, in the row-by-row path.
    (err: { code?: string }) => {
      if (err.code !== UNIQUE_VIOLATION) throw err;
      return false;
    },
  );
}

/** Inserts the ledger rows that were not there yet and returns their events, in chain order. */
export async function insertLedgerRowByRow(t: ITask<unknown>, parsed: ParsedTransaction[], events: NewEvent[]): Promise<NewEvent[]> {
  const ledger = combineStatements(ledgerStatements(parsed, events, true));
  const rows = await t.any<{ signature: string; event_index: number }>(ledger as never);
  // RETURNING order is not guaranteed: walk the batch in chain order instead.
  const created = new Set(rows.map((r) => `${r.signature}:${r.event_index}`));
  return events.filter((e) => created.has(`${e.ctx.signature}:${e.ctx.eventIndex}`));
}
