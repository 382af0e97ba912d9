import type { ITask } from 'pg-promise';
import type { ParsedTransaction } from '../../core/events';
import type { BatchResult } from './batch';

/** Thrown when another process became the writer: this one must stop writing. */
export class FencedError extends Error {
  override name = 'FencedError';
}

type CursorRow = { writer_epoch: string; next_ids: Record<string, number> };

/**
 * Locks the cursor row for the batch transaction and checks the fencing token: a process that
 * lost the writer lock cannot write. Returns the id counters the batch starts from. Sets the
 * savepoint `ledger` (what a batch holding known events rolls back to) in the same round trip,
 * as a second statement of the query string; nothing is written before the check, so a fenced
 * process rolls back an empty transaction.
 */
export async function lockCursor(t: ITask<unknown>, writerEpoch: number): Promise<Record<string, number>> {
  const [rows] = await t.multi<CursorRow>('SELECT writer_epoch, next_ids FROM indexer_cursor WHERE id = 1 FOR UPDATE; SAVEPOINT ledger');
  const cursor = rows?.[0];
  if (!cursor) throw new Error('indexer_cursor has no row: the migrations were not run');
  if (Number(cursor.writer_epoch) !== writerEpoch) {
    throw new FencedError(`writer epoch is ${cursor.writer_epoch}, this process holds ${writerEpoch}`);
  }
  return cursor.next_ids;
}

/** Advances the cursor past the batch, in its transaction. */
export async function advanceCursor(t: ITask<unknown>, result: BatchResult, parsed: ParsedTransaction[], nextIds: Record<string, number>): Promise<void> {
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
    [result.slot ?? 0, last?.signature ?? null, last?.blockTime ? new Date(last.blockTime * 1000) : null, result.applied, nextIds],
  );
}

export function sameIds(a: Record<string, number>, b: Record<string, number>): boolean {
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if ((a[k] ?? 1) !== (b[k] ?? 1)) return false;
  return true;
}
